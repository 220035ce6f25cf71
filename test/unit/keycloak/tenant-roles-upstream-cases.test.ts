// Upstream's tenant "Authorization" cases at e62be9e: given the user's current client roles and the
// Tenant's workspace entries, which roles are added and removed (docs/behaviour.md §5.7 step 4,
// §16.4). The wanted roles come from the model as the Tenant reconciler derives them; Keycloak is
// the double. Upstream's ws1 and ws2 have no autoEnroll, so a candidate entry counts for nothing.
import { afterEach, describe, expect, it } from 'vitest';
import type { Tenant, TenantWorkspaceEntry, Workspace } from '../../../src/inputs/types.ts';
import { wantedWorkspaceRoles } from '../../../src/integrations/keycloak/index.ts';
import { enrolledWorkspaces, splitWorkspaces } from '../../../src/model/tenant-plan.ts';
import { TARGET_CLIENT, TARGET_REALM, closeFixtures, startFixture } from './fixture.ts';

afterEach(closeFixtures);

const ws = (name: string): Workspace =>
  ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name }, spec: { prettyName: name, quota: { cpu: 1, memory: '1Gi', instances: 1 } } }) as Workspace;
const WORKSPACES = new Map([ws('ws1'), ws('ws2')].map((w) => [w.metadata.name, w]));
const wanted = (entries: TenantWorkspaceEntry[]) =>
  wantedWorkspaceRoles(enrolledWorkspaces(splitWorkspaces({ spec: { workspaces: entries } } as Tenant, WORKSPACES).existing));

const M1 = 'workspace-ws1:manager';
const U1 = 'workspace-ws1:user';
const M2 = 'workspace-ws2:manager';
const U2 = 'workspace-ws2:user';
const OTHER = 'no-ws-role';

const rows: [what: string, entries: TenantWorkspaceEntry[], current: string[], added: string[], removed: string[]][] = [
  ['no workspaces, no roles: nothing written', [], [], [], []],
  ['no workspaces, workspace roles held: those removed, no other role', [], [M1, U2, OTHER], [], [M1, U2]],
  ['the roles held are the wanted ones: nothing written', [{ name: 'ws1', role: 'manager' }, { name: 'ws2', role: 'user' }], [M1, U2, OTHER], [], []],
  ['a wanted role missing: added', [{ name: 'ws1', role: 'manager' }, { name: 'ws2', role: 'user' }], [M1], [U2], []],
  ['roles swapped between manager and user: the new added, the old removed', [{ name: 'ws1', role: 'user' }, { name: 'ws2', role: 'manager' }], [M1, U2], [U1, M2], [M1, U2]],
  ['a workspace that does not exist: no role for it', [{ name: 'invalid-ws', role: 'user' }], [], [], []],
  ['a candidate entry: no role for it', [{ name: 'ws1', role: 'candidate' }], [], [], []],
];

describe('upstream tenant "Authorization": roles added and removed in Keycloak', () => {
  for (const [what, entries, current, added, removed] of rows) {
    it(what, async () => {
      const { double, client } = await startFixture();
      await client.ensureWorkspaceRoles('ws1', 'ws1');
      await client.ensureWorkspaceRoles('ws2', 'ws2');
      double.addClientRole(TARGET_REALM, TARGET_CLIENT, OTHER);
      const user = { username: 'testuser', firstName: 'Test', lastName: 'Tenant', email: 'test@tenant.example' };
      double.addUser(TARGET_REALM, { ...user, emailVerified: true });
      for (const role of current) double.grantClientRole(TARGET_REALM, 'testuser', TARGET_CLIENT, role);
      double.clearRequestLog();

      const result = await client.syncUser({ ...user, wantedRoles: wanted(entries) });

      expect(result).toMatchObject({ ok: true, rolesAdded: added, rolesRemoved: removed });
      const after = [...current.filter((r) => !removed.includes(r)), ...added].sort();
      expect(double.userClientRoles(TARGET_REALM, 'testuser', TARGET_CLIENT)).toEqual(after);
      if (added.length === 0 && removed.length === 0) expect(double.writes()).toEqual([]);
    });
  }
});
