import { describe, expect, it } from 'vitest';
import { migrateObjects } from '../../../src/migrate/level-migration.ts';
import { statusWrite } from '../../../src/migrate/status-write.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';

const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: 'u', resourceVersion: '1' });
const tenant = (status?: object): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Tenant',
  metadata: meta('mario'),
  spec: { firstName: 'M', lastName: 'R', email: 'm@example.com' },
  ...(status ? { status } : {}),
});

describe('migrate --apply: what goes to the status subresource', () => {
  it("a Tenant's 2e8aeb9 status, dropped by the mapping, is cleared (left live, it lacks what e62be9e's schema requires and the controller refuses the Tenant)", () => {
    const [m] = migrateObjects([tenant({ personalNamespace: { name: 'tenant-mario', created: true }, ready: true })]);
    expect(m!.after.status).toBeUndefined();
    expect(statusWrite(m!)).toBe('clear');
  });

  it('a Tenant without status: nothing to write', () => {
    const [m] = migrateObjects([tenant()]);
    expect(statusWrite(m!)).toBeUndefined();
  });

  it("an Instance's migrated status is set; a status migrate keeps unchanged (a Workspace's) is not written", () => {
    expect(statusWrite({ before: { ...tenant(), kind: 'Instance', status: { phase: 'Ready', ip: '10.0.0.1' } }, after: { ...tenant(), kind: 'Instance', status: { phase: 'Ready', environments: [] } } })).toBe('set');
    const ws = { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: meta('w'), spec: {}, status: { ready: true } };
    expect(statusWrite({ before: ws, after: ws })).toBeUndefined();
  });
});
