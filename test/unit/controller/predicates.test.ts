import { describe, expect, it } from 'vitest';
import { instanceChanged } from '../../../src/controller/predicates.ts';
import { rfc3339 } from '../../../src/model/automation.ts';
import { INACTIVITY_ANNOTATION as A } from '../../../src/model/inactivity.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => rfc3339(ms);

describe('instanceChanged', () => {
  const inst = (annotations: Record<string, string>, running = true) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'i', namespace: 'n', generation: 1, annotations }, spec: { running } }) as never;
  it('the inactivity bookkeeping alone does not wake the Instance and automation reconcilers; any other change does', () => {
    expect(instanceChanged(inst({ [A.lastActivityCheck]: at(T0 + 1000), [A.lastActivity]: at(T0), a: '1' }), inst({ [A.lastActivityCheck]: at(T0), a: '1' }))).toBe(false);
    expect(instanceChanged(inst({ [A.lastActivityCheck]: at(T0 + 1000), a: '2' }), inst({ [A.lastActivityCheck]: at(T0), a: '1' }))).toBe(true);
    expect(instanceChanged({ ...(inst({}) as object), metadata: { name: 'i', namespace: 'n', generation: 2 } } as never, inst({}))).toBe(true);
  });
});
