import { afterEach, describe, expect, it } from 'vitest';
import { wantedWorkspaceRoles, workspaceRoleName } from '../../../src/integrations/keycloak/index.ts';
import { TARGET_CLIENT, TARGET_REALM, closeFixtures, startFixture } from './fixture.ts';

afterEach(closeFixtures);

describe('docs/behaviour.md §4.3 workspace client roles', () => {
  it('names the roles workspace-<ws>:manager and workspace-<ws>:user', () => {
    expect(workspaceRoleName('netgroup', 'manager')).toBe('workspace-netgroup:manager');
    expect(workspaceRoleName('netgroup', 'user')).toBe('workspace-netgroup:user');
  });

  it('creates both missing roles as client roles described by the pretty name', async () => {
    const { double, client } = await startFixture();
    const result = await client.ensureWorkspaceRoles('netgroup', 'Computer Networks Group');

    expect(result).toMatchObject({ ok: true, errors: [], created: ['workspace-netgroup:manager', 'workspace-netgroup:user'] });
    for (const name of ['workspace-netgroup:manager', 'workspace-netgroup:user']) {
      expect(double.clientRole(TARGET_REALM, TARGET_CLIENT, name)?.description).toBe('Computer Networks Group');
    }
    // The lookup that found the role missing went through Keycloak's own 404 answer.
    expect(double.requestsTo('GET', /\/roles\/workspace-netgroup:manager$/)[0]?.status).toBe(404);
  });

  it('describes each role by its own text when given one per role (e62be9e: "<prettyName> Manager Role")', async () => {
    const { double, client } = await startFixture();
    double.addClientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:user', 'Computer Networks Group');
    const result = await client.ensureWorkspaceRoles('netgroup', (role) => `Computer Networks Group ${role === 'manager' ? 'Manager' : 'User'} Role`);
    expect(result).toMatchObject({ ok: true, created: ['workspace-netgroup:manager'], updated: ['workspace-netgroup:user'] });
    expect(double.clientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:manager')?.description).toBe('Computer Networks Group Manager Role');
    expect(double.clientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:user')?.description).toBe('Computer Networks Group User Role');
  });

  it('re-applies the description of existing roles, and writes nothing when it already matches', async () => {
    const { double, client } = await startFixture();
    double.addClientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:manager', 'old name');
    double.addClientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:user', 'Computer Networks Group');

    const first = await client.ensureWorkspaceRoles('netgroup', 'Computer Networks Group');
    expect(first).toMatchObject({ ok: true, created: [], updated: ['workspace-netgroup:manager'], unchanged: ['workspace-netgroup:user'] });
    expect(double.clientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:manager')?.description).toBe('Computer Networks Group');

    double.clearRequestLog();
    const second = await client.ensureWorkspaceRoles('netgroup', 'Computer Networks Group');
    expect(second.unchanged).toHaveLength(2);
    expect(double.writes()).toEqual([]);
  });

  it('attempts the second role when the first fails, and reports the failure with status and Keycloak text', async () => {
    const { double, client } = await startFixture();
    double.failNext({ method: 'POST', path: /\/roles$/, status: 500, body: { errorMessage: 'database is read-only' } });

    const result = await client.ensureWorkspaceRoles('netgroup', 'Networks');

    expect(result.ok).toBe(false);
    expect(result.created).toEqual(['workspace-netgroup:user']);
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: 'http', status: 500, message: 'database is read-only', operation: 'create role workspace-netgroup:manager' }),
    ]);
    // A later reconcile completes the job.
    const retry = await client.ensureWorkspaceRoles('netgroup', 'Networks');
    expect(retry).toMatchObject({ ok: true, created: ['workspace-netgroup:manager'], unchanged: ['workspace-netgroup:user'] });
  });

  it('does not create a role when the lookup fails for another reason than "Could not find role"', async () => {
    const { double, client } = await startFixture();
    double.failNext({ method: 'GET', path: /\/roles\/workspace-netgroup:user$/, status: 404, body: '<html>404 page not found</html>' });

    const result = await client.ensureWorkspaceRoles('netgroup', 'Networks');

    expect(result.created).toEqual(['workspace-netgroup:manager']);
    expect(result.errors).toEqual([expect.objectContaining({ status: 404, message: '<html>404 page not found</html>' })]);
    expect(double.clientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:user')).toBeUndefined();
  });

  it('treats a creation conflict (another replica was faster) as an existing role', async () => {
    const { double, client } = await startFixture();
    // The role appears between our lookup and our creation.
    double.failNext({ method: 'GET', path: /\/roles\/workspace-netgroup:manager$/, status: 404, body: { error: 'Could not find role' } });
    double.addClientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:manager', 'stale');

    const result = await client.ensureWorkspaceRoles('netgroup', 'Networks');

    expect(result).toMatchObject({ ok: true, updated: ['workspace-netgroup:manager'], created: ['workspace-netgroup:user'] });
    expect(double.requestsTo('POST', /\/roles$/)[0]?.status).toBe(409);
    expect(double.clientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:manager')?.description).toBe('Networks');
  });

  it('reports a target client that does not exist', async () => {
    const { client } = await startFixture({ config: { targetClientId: 'no-such-client' } });
    const result = await client.ensureWorkspaceRoles('netgroup', 'Networks');
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: 'not-found', message: 'no client with clientId "no-such-client" in realm "crownlabs"' }),
    ]);
  });

  it('resolves the client again after it was re-created under a new internal id', async () => {
    const { double, client } = await startFixture();
    expect((await client.ensureWorkspaceRoles('a', 'A')).ok).toBe(true);
    const realm = double.realm(TARGET_REALM);
    const old = double.clientByClientId(TARGET_REALM, TARGET_CLIENT);
    realm.clients.delete(old.id);
    double.addClient(TARGET_REALM, TARGET_CLIENT);

    const stale = await client.ensureWorkspaceRoles('b', 'B');
    expect(stale.errors[0]).toMatchObject({ status: 404, message: 'Could not find client' });
    const fresh = await client.ensureWorkspaceRoles('b', 'B');
    expect(fresh).toMatchObject({ ok: true, created: ['workspace-b:manager', 'workspace-b:user'] });
  });
});

describe('docs/behaviour.md §4.5 step 1 deleting workspace roles', () => {
  it('deletes both roles and the users lose them', async () => {
    const { double, client } = await startFixture();
    await client.ensureWorkspaceRoles('netgroup', 'Networks');
    double.addUser(TARGET_REALM, { username: 'alice' });
    double.grantClientRole(TARGET_REALM, 'alice', TARGET_CLIENT, 'workspace-netgroup:user');

    const result = await client.deleteWorkspaceRoles('netgroup');

    expect(result).toMatchObject({ ok: true, deleted: ['workspace-netgroup:manager', 'workspace-netgroup:user'], absent: [] });
    expect(double.clientByClientId(TARGET_REALM, TARGET_CLIENT).roles.size).toBe(0);
    expect(double.userClientRoles(TARGET_REALM, 'alice', TARGET_CLIENT)).toEqual([]);
  });

  it('ignores roles that are already gone (404)', async () => {
    const { double, client } = await startFixture();
    double.addClientRole(TARGET_REALM, TARGET_CLIENT, 'workspace-netgroup:user');

    const result = await client.deleteWorkspaceRoles('netgroup');

    expect(result).toMatchObject({ ok: true, errors: [], deleted: ['workspace-netgroup:user'], absent: ['workspace-netgroup:manager'] });
  });

  it('attempts both deletions and reports the one that failed', async () => {
    const { double, client } = await startFixture();
    await client.ensureWorkspaceRoles('netgroup', 'Networks');
    double.failNext({ method: 'DELETE', path: /workspace-netgroup:manager$/, status: 503, body: 'Service Unavailable' });

    const result = await client.deleteWorkspaceRoles('netgroup');

    expect(result.ok).toBe(false);
    expect(result.deleted).toEqual(['workspace-netgroup:user']);
    expect(result.errors).toEqual([expect.objectContaining({ kind: 'http', status: 503, operation: 'delete role workspace-netgroup:manager' })]);
  });
});

describe('docs/behaviour.md §5.7 step 4 wanted roles of a tenant', () => {
  it('gives one role per workspace entry, without duplicates, ignoring roles Keycloak does not know', () => {
    expect(
      wantedWorkspaceRoles([
        { name: 'netgroup', role: 'manager' },
        { name: 'sid', role: 'user' },
        { name: 'sid', role: 'user' },
        { name: 'exam', role: 'candidate' },
      ]),
    ).toEqual(['workspace-netgroup:manager', 'workspace-sid:user']);
  });
});
