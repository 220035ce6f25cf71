import { afterEach, describe, expect, it } from 'vitest';
import type { KeycloakUserSpec } from '../../../src/integrations/keycloak/index.ts';
import { ACTIONS_EMAIL_LIFESPAN_SECONDS } from '../../../src/integrations/keycloak/index.ts';
import { TARGET_CLIENT, TARGET_REALM, closeFixtures, startFixture } from './fixture.ts';

afterEach(closeFixtures);

const john: KeycloakUserSpec = {
  username: 'john.doe',
  firstName: 'John',
  lastName: 'Doe',
  email: 'John.Doe@Example.org',
  wantedRoles: [],
};

describe('docs/behaviour.md §5.7 step 2 a tenant without Keycloak user', () => {
  it('creates an enabled, unverified user with the lower-cased e-mail and sends the set-up e-mail', async () => {
    const { double, client } = await startFixture();

    const result = await client.syncUser(john);

    expect(result).toMatchObject({ ok: true, errors: [], created: true, updated: false, actionsEmailSent: true });
    const user = double.findUser(TARGET_REALM, 'john.doe');
    expect(user).toMatchObject({ firstName: 'John', lastName: 'Doe', email: 'john.doe@example.org', enabled: true, emailVerified: false });
    expect(result.userId).toBe(user?.id);
    expect(double.requestsTo('POST', `/admin/realms/${TARGET_REALM}/users`)[0]?.body).toMatchObject({ email: 'john.doe@example.org' });
    expect(double.emails).toEqual([
      {
        realm: TARGET_REALM,
        userId: user?.id,
        username: 'john.doe',
        email: 'john.doe@example.org',
        actions: ['UPDATE_PASSWORD', 'VERIFY_EMAIL'],
        lifespan: ACTIONS_EMAIL_LIFESPAN_SECONDS,
      },
    ]);
  });

  it('keeps the created user and still syncs roles when the e-mail cannot be sent', async () => {
    const { double, client } = await startFixture();
    await client.ensureWorkspaceRoles('netgroup', 'Networks');
    double.smtpConfigured = false;

    const result = await client.syncUser({ ...john, wantedRoles: ['workspace-netgroup:user'] });

    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ created: true, actionsEmailSent: false, rolesAdded: ['workspace-netgroup:user'] });
    expect(result.errors).toEqual([
      expect.objectContaining({ status: 500, message: 'Failed to send execute actions email', operation: 'send actions e-mail to john.doe' }),
    ]);
    expect(double.userClientRoles(TARGET_REALM, 'john.doe', TARGET_CLIENT)).toEqual(['workspace-netgroup:user']);
  });

  it('reports a creation refused by Keycloak (e-mail taken by another user) and stops there', async () => {
    const { double, client } = await startFixture();
    double.addUser(TARGET_REALM, { username: 'someone-else', email: 'john.doe@example.org' });

    const result = await client.syncUser(john);

    expect(result).toMatchObject({ ok: false, created: false, userId: undefined });
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: 'http', status: 409, message: 'User exists with same email', operation: 'create user john.doe' }),
    ]);
    expect(double.emails).toEqual([]);
  });
});

describe('docs/behaviour.md §5.7 step 3 a tenant with a Keycloak user', () => {
  it('updates names and enables the user without touching a verified, unchanged e-mail', async () => {
    const { double, client } = await startFixture();
    const id = double.addUser(TARGET_REALM, {
      username: 'john.doe',
      firstName: 'Jon',
      lastName: 'Doe',
      email: 'john.doe@example.org',
      emailVerified: true,
      enabled: false,
      attributes: { studentId: ['s123'] },
    });

    const result = await client.syncUser(john);

    expect(result).toMatchObject({ ok: true, created: false, updated: true, actionsEmailSent: false, userId: id });
    expect(double.findUser(TARGET_REALM, 'john.doe')).toMatchObject({
      firstName: 'John',
      enabled: true,
      emailVerified: true,
      attributes: { studentId: ['s123'] },
    });
    expect(double.emails).toEqual([]);
  });

  it('compares e-mails ignoring case', async () => {
    const { double, client } = await startFixture();
    double.addUser(TARGET_REALM, { ...john, email: 'JOHN.DOE@example.org', emailVerified: true });

    const result = await client.syncUser(john);

    expect(result).toMatchObject({ ok: true, updated: false, actionsEmailSent: false });
    expect(double.writes()).toEqual([]);
  });

  it('on a changed e-mail marks it unverified and sends the actions e-mail to the new address', async () => {
    const { double, client } = await startFixture();
    double.addUser(TARGET_REALM, { ...john, email: 'old@example.org', emailVerified: true });

    const result = await client.syncUser(john);

    expect(result).toMatchObject({ ok: true, updated: true, actionsEmailSent: true });
    expect(double.findUser(TARGET_REALM, 'john.doe')).toMatchObject({ email: 'john.doe@example.org', emailVerified: false });
    expect(double.emails.map((mail) => mail.email)).toEqual(['john.doe@example.org']);
  });

  it('does not send the e-mail when the update failed, and still syncs roles', async () => {
    const { double, client } = await startFixture();
    await client.ensureWorkspaceRoles('netgroup', 'Networks');
    double.addUser(TARGET_REALM, { ...john, email: 'old@example.org', emailVerified: true });
    double.failNext({ method: 'PUT', path: /^\/admin\/realms\/crownlabs\/users\/[^/]+$/, status: 503, body: 'Service Unavailable' });

    const result = await client.syncUser({ ...john, wantedRoles: ['workspace-netgroup:manager'] });

    expect(result).toMatchObject({ ok: false, updated: false, actionsEmailSent: false, rolesAdded: ['workspace-netgroup:manager'] });
    expect(result.errors).toEqual([
      expect.objectContaining({ status: 503, message: 'Service Unavailable', operation: 'update user john.doe' }),
    ]);
    expect(double.emails).toEqual([]);
    expect(double.findUser(TARGET_REALM, 'john.doe')?.emailVerified).toBe(true);
  });
});

describe('docs/behaviour.md §5.7 step 1 finding the user by username', () => {
  it('takes the exact match among several search results (servers that search by substring)', async () => {
    const { double, client } = await startFixture({ double: { legacyUserSearch: true } });
    double.addUser(TARGET_REALM, { username: 'john' , email: 'a@example.org' });
    const exactId = double.addUser(TARGET_REALM, { username: 'john.doe', email: 'john.doe@example.org', firstName: 'John', lastName: 'Doe' });
    double.addUser(TARGET_REALM, { username: 'john.doe2', email: 'b@example.org' });

    const result = await client.syncUser(john);

    expect(result).toMatchObject({ ok: true, created: false, userId: exactId });
  });

  it('never takes a single result that is not an exact match (upstream would hijack "john.doe" for "john")', async () => {
    const { double, client } = await startFixture({ double: { legacyUserSearch: true } });
    const other = double.addUser(TARGET_REALM, { username: 'john.doe', email: 'john.doe@example.org' });

    const result = await client.syncUser({ ...john, username: 'john', email: 'john@example.org' });

    expect(result).toMatchObject({ ok: true, created: true });
    expect(result.userId).not.toBe(other);
    expect(double.realm(TARGET_REALM).users.get(other)?.email).toBe('john.doe@example.org');
  });

  it('asks for an exact search, so that more than 100 substring matches cannot hide the user', async () => {
    const { double, client } = await startFixture();
    await client.syncUser(john);
    expect(double.requestsTo('GET', `/admin/realms/${TARGET_REALM}/users`)[0]?.query).toEqual({ username: 'john.doe', exact: 'true' });
  });

  it('refuses to pick one of several users with exactly that username', async () => {
    const { double, client } = await startFixture();
    double.addUser(TARGET_REALM, { username: 'john.doe', email: 'one@example.org' });
    double.addUser(TARGET_REALM, { username: 'john.doe', email: 'two@example.org' }, { allowDuplicate: true });

    const result = await client.syncUser(john);

    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([expect.objectContaining({ kind: 'ambiguous', message: expect.stringContaining('2 users have the username "john.doe"') })]);
    expect(double.writes()).toEqual([]);
  });
});

describe('docs/behaviour.md §5.7 step 4 client roles of the user', () => {
  async function withRoles() {
    const fixture = await startFixture();
    await fixture.client.ensureWorkspaceRoles('netgroup', 'Networks');
    await fixture.client.ensureWorkspaceRoles('sid', 'Security');
    await fixture.client.ensureWorkspaceRoles('old', 'Old');
    fixture.double.addClientRole(TARGET_REALM, TARGET_CLIENT, 'admin-dashboard');
    return fixture;
  }

  it('adds wanted roles and removes unwanted workspace-* roles, keeping every other role', async () => {
    const { double, client } = await withRoles();
    double.addUser(TARGET_REALM, { ...john, email: 'john.doe@example.org' });
    double.grantClientRole(TARGET_REALM, 'john.doe', TARGET_CLIENT, 'workspace-old:user');
    double.grantClientRole(TARGET_REALM, 'john.doe', TARGET_CLIENT, 'workspace-netgroup:user');
    double.grantClientRole(TARGET_REALM, 'john.doe', TARGET_CLIENT, 'admin-dashboard');

    const result = await client.syncUser({ ...john, wantedRoles: ['workspace-netgroup:user', 'workspace-sid:manager'] });

    expect(result).toMatchObject({ ok: true, rolesAdded: ['workspace-sid:manager'], rolesRemoved: ['workspace-old:user'] });
    expect(double.userClientRoles(TARGET_REALM, 'john.doe', TARGET_CLIENT)).toEqual([
      'admin-dashboard',
      'workspace-netgroup:user',
      'workspace-sid:manager',
    ]);
    // Keycloak checks the representations sent in the mapping bodies by name and id.
    const [removal] = double.requestsTo('DELETE', /\/role-mappings\/clients\//);
    expect(removal).toMatchObject({ status: 204, body: [expect.objectContaining({ name: 'workspace-old:user', id: expect.any(String) })] });
  });

  it('sends no write when the roles already match', async () => {
    const { double, client } = await withRoles();
    await client.syncUser({ ...john, wantedRoles: ['workspace-sid:user'] });
    double.clearRequestLog();

    const again = await client.syncUser({ ...john, wantedRoles: ['workspace-sid:user'] });

    expect(again).toMatchObject({ ok: true, rolesAdded: [], rolesRemoved: [] });
    expect(double.writes()).toEqual([]);
  });

  it('reports a wanted role that does not exist, and still does the rest', async () => {
    const { double, client } = await withRoles();
    double.addUser(TARGET_REALM, { ...john, email: 'john.doe@example.org' });
    double.grantClientRole(TARGET_REALM, 'john.doe', TARGET_CLIENT, 'workspace-old:manager');

    const result = await client.syncUser({ ...john, wantedRoles: ['workspace-ghost:user', 'workspace-sid:user'] });

    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: 'http', status: 404, message: 'Could not find role', operation: 'get role workspace-ghost:user' }),
    ]);
    expect(result).toMatchObject({ rolesAdded: ['workspace-sid:user'], rolesRemoved: ['workspace-old:manager'] });
  });

  it('still adds the wanted roles when the current mappings cannot be read', async () => {
    const { double, client } = await withRoles();
    double.addUser(TARGET_REALM, { ...john, email: 'john.doe@example.org' });
    double.failNext({ method: 'GET', path: /\/role-mappings\/clients\//, status: 500, body: { error: 'unknown_error' } });

    const result = await client.syncUser({ ...john, wantedRoles: ['workspace-sid:user'] });

    expect(result.errors).toEqual([expect.objectContaining({ status: 500, operation: 'get client roles of john.doe' })]);
    expect(result.rolesAdded).toEqual(['workspace-sid:user']);
    expect(double.userClientRoles(TARGET_REALM, 'john.doe', TARGET_CLIENT)).toEqual(['workspace-sid:user']);
  });
});

describe('docs/behaviour.md §5.8 deleting the user of a deleted tenant', () => {
  it('deletes the user and its role mappings', async () => {
    const { double, client } = await startFixture();
    const created = await client.syncUser(john);

    const result = await client.deleteUser('john.doe');

    expect(result).toEqual({ ok: true, errors: [], deleted: true, userId: created.userId });
    expect(double.findUser(TARGET_REALM, 'john.doe')).toBeUndefined();
  });

  it('succeeds when there is no such user', async () => {
    const { double, client } = await startFixture();
    double.addUser(TARGET_REALM, { username: 'john.doe.senior' });
    expect(await client.deleteUser('john.doe')).toEqual({ ok: true, errors: [], deleted: false });
    expect(double.findUser(TARGET_REALM, 'john.doe.senior')).toBeDefined();
  });

  it('succeeds when the user vanished between lookup and deletion', async () => {
    const { double, client } = await startFixture();
    await client.syncUser(john);
    double.failNext({ method: 'DELETE', path: /\/users\/[^/]+$/, status: 404, body: { error: 'User not found' } });
    expect(await client.deleteUser('john.doe')).toMatchObject({ ok: true, deleted: false });
  });

  it('reports a failed deletion so that the finalizer stays', async () => {
    const { double, client } = await startFixture();
    await client.syncUser(john);
    double.failNext({ method: 'DELETE', path: /\/users\/[^/]+$/, status: 500, body: { errorMessage: 'boom' } });
    const result = await client.deleteUser('john.doe');
    expect(result).toMatchObject({ ok: false, deleted: false, errors: [expect.objectContaining({ status: 500, message: 'boom' })] });
  });
});
