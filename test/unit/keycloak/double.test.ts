/**
 * The Keycloak double answers like Keycloak does: these checks pin the behaviour the module's tests
 * rely on, with raw HTTP requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeycloakDouble } from '../../support/keycloak-double.ts';

let double: KeycloakDouble;
let token: string;

beforeAll(async () => {
  double = await KeycloakDouble.start();
  token = await login('admin', 'admin-secret');
});
afterAll(() => double.close());

function tokenRequest(fields: Record<string, string>, realm = 'master') {
  return fetch(`${double.url}/realms/${realm}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
}

async function login(username: string, password: string): Promise<string> {
  const response = await tokenRequest({ grant_type: 'password', client_id: 'admin-cli', username, password });
  return ((await response.json()) as { access_token: string }).access_token;
}

function admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${double.url}/admin/realms${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function answer(response: Promise<Response>): Promise<{ status: number; body: unknown }> {
  const reply = await response;
  const text = await reply.text();
  return { status: reply.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

function clientId(): string {
  return double.clientByClientId('crownlabs', 'k8s').id;
}

describe('token endpoint', () => {
  it('issues a JWT-shaped bearer token with its lifetime', async () => {
    const reply = await answer(tokenRequest({ grant_type: 'password', client_id: 'admin-cli', username: 'admin', password: 'admin-secret' }));
    expect(reply).toMatchObject({ status: 200, body: { token_type: 'Bearer', expires_in: 60, access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/) } });
  });

  it.each([
    [{ grant_type: 'password', client_id: 'admin-cli', username: 'admin', password: 'nope' }, 401, { error: 'invalid_grant', error_description: 'Invalid user credentials' }],
    [{ grant_type: 'password', client_id: 'admin-cli', username: 'ghost', password: 'x' }, 401, { error: 'invalid_grant', error_description: 'Invalid user credentials' }],
    [{ grant_type: 'password', client_id: 'k8s', username: 'admin', password: 'admin-secret' }, 401, { error: 'invalid_client', error_description: 'Invalid client or Invalid client credentials' }],
    [{ grant_type: 'client_credentials', client_id: 'admin-cli' }, 400, { error: 'unsupported_grant_type', error_description: 'Unsupported grant_type' }],
    [{ client_id: 'admin-cli' }, 400, { error: 'invalid_request', error_description: 'Missing form parameter: grant_type' }],
  ])('rejects %j with %i', async (fields, status, body) => {
    expect(await answer(tokenRequest(fields))).toEqual({ status, body });
  });

  it('answers 404 for an unknown realm', async () => {
    expect(await answer(tokenRequest({ grant_type: 'password' }, 'nope'))).toEqual({ status: 404, body: { error: 'Realm does not exist' } });
  });
});

describe('admin API authentication', () => {
  it('requires a bearer token', async () => {
    expect(await answer(admin('GET', '/crownlabs/users', undefined, { authorization: '' }))).toEqual({
      status: 401,
      body: { error: 'HTTP 401 Unauthorized' },
    });
    expect((await answer(admin('GET', '/crownlabs/users', undefined, { authorization: `Bearer ${token}x` }))).status).toBe(401);
  });

  it('rejects expired and revoked tokens', async () => {
    const local = await KeycloakDouble.start();
    try {
      const fresh = await fetch(`${local.url}/realms/master/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'admin', password: 'admin-secret' }),
      });
      const bearer = ((await fresh.json()) as { access_token: string }).access_token;
      const get = () => fetch(`${local.url}/admin/realms/crownlabs/users`, { headers: { authorization: `Bearer ${bearer}` } });
      expect((await get()).status).toBe(200);
      local.advanceClock(61_000);
      expect((await get()).status).toBe(401);
      local.advanceClock(-61_000);
      expect((await get()).status).toBe(200);
      local.revokeTokens();
      expect((await get()).status).toBe(401);
      // A token of another double (another server's keys) is no good either.
      expect((await fetch(`${local.url}/admin/realms/crownlabs/users`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    } finally {
      await local.close();
    }
  });

  it('answers 404 "Realm not found." for an unknown realm', async () => {
    expect(await answer(admin('GET', '/nope/users'))).toEqual({ status: 404, body: { error: 'Realm not found.' } });
  });

  it('lets a non-master realm token manage only its own realm', async () => {
    double.addRealm('other');
    double.addUser('other', { username: 'local-admin', password: 'pw' });
    const response = await tokenRequest({ grant_type: 'password', client_id: 'admin-cli', username: 'local-admin', password: 'pw' }, 'other');
    const localToken = ((await response.json()) as { access_token: string }).access_token;
    const get = (realm: string) => fetch(`${double.url}/admin/realms/${realm}/users`, { headers: { authorization: `Bearer ${localToken}` } });
    expect((await get('other')).status).toBe(200);
    expect((await get('crownlabs')).status).toBe(403);
  });
});

describe('clients and client roles', () => {
  it('finds a client by exact clientId only', async () => {
    expect(await answer(admin('GET', '/crownlabs/clients?clientId=k8s'))).toMatchObject({ status: 200, body: [{ clientId: 'k8s', id: clientId() }] });
    expect(await answer(admin('GET', '/crownlabs/clients?clientId=k8'))).toEqual({ status: 200, body: [] });
    expect(await answer(admin('GET', '/crownlabs/clients/not-an-id/roles'))).toEqual({ status: 404, body: { error: 'Could not find client' } });
  });

  it('creates, reads, conflicts on, updates and deletes a role', async () => {
    const roles = `/crownlabs/clients/${clientId()}/roles`;
    const name = encodeURIComponent('workspace-x:user');
    expect(await answer(admin('GET', `${roles}/${name}`))).toEqual({ status: 404, body: { error: 'Could not find role' } });

    const created = await admin('POST', roles, { name: 'workspace-x:user', description: 'X' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${double.url}/admin/realms${roles}/${name}`);
    expect(await answer(admin('POST', roles, { name: 'workspace-x:user' }))).toEqual({
      status: 409,
      body: { errorMessage: 'Role with name workspace-x:user already exists' },
    });

    expect((await admin('PUT', `${roles}/${name}`, { name: 'workspace-x:user', description: 'Y' })).status).toBe(204);
    expect(await answer(admin('GET', `${roles}/${name}`))).toMatchObject({ status: 200, body: { description: 'Y', clientRole: true } });
    expect((await admin('DELETE', `${roles}/${name}`)).status).toBe(204);
    expect((await admin('DELETE', `${roles}/${name}`)).status).toBe(404);
  });
});

describe('users', () => {
  it('creates a user (lower-casing username and e-mail) and refuses a second one with the same username', async () => {
    const created = await admin('POST', '/crownlabs/users', { username: 'Mario.Rossi', email: 'Mario@Example.org', enabled: true });
    expect(created.status).toBe(201);
    const id = created.headers.get('location')?.split('/').pop();
    expect(double.realm('crownlabs').users.get(id ?? '')).toMatchObject({ username: 'mario.rossi', email: 'mario@example.org' });
    expect(await answer(admin('POST', '/crownlabs/users', { username: 'mario.rossi' }))).toEqual({
      status: 409,
      body: { errorMessage: 'User exists with same username' },
    });
    expect(await answer(admin('POST', '/crownlabs/users', { username: 'other', email: 'MARIO@example.org' }))).toEqual({
      status: 409,
      body: { errorMessage: 'User exists with same email' },
    });
  });

  it('searches usernames by substring, or exactly with exact=true', async () => {
    double.addUser('crownlabs', { username: 'anna' });
    double.addUser('crownlabs', { username: 'annamaria' });
    const names = async (query: string) =>
      ((await answer(admin('GET', `/crownlabs/users?${query}`))).body as Array<{ username: string }>).map((user) => user.username);
    expect(await names('username=ANNA')).toEqual(['anna', 'annamaria']);
    expect(await names('username=anna&exact=true')).toEqual(['anna']);
  });

  it('validates JSON bodies', async () => {
    expect(await answer(admin('POST', '/crownlabs/users', '{"username": '))).toEqual({ status: 400, body: { error: 'unknown_error' } });
    expect(await answer(admin('POST', '/crownlabs/users', { username: 'x', enabled: 'yes' }))).toEqual({ status: 400, body: { error: 'unknown_error' } });
    expect(await answer(admin('POST', '/crownlabs/users', { firstName: 'No Name' }))).toEqual({ status: 400, body: { errorMessage: 'User name is missing' } });
    expect(await answer(admin('POST', '/crownlabs/users', { username: 'y', email: 'not-an-email' }))).toMatchObject({
      status: 400,
      body: { field: 'email', errorMessage: 'invalidEmailMessage' },
    });
    expect((await admin('POST', '/crownlabs/users', JSON.stringify({ username: 'z' }), { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('sends the actions e-mail only to an enabled user with an address', async () => {
    const noMail = double.addUser('crownlabs', { username: 'nomail' });
    const disabled = double.addUser('crownlabs', { username: 'off', email: 'off@example.org', enabled: false });
    const actions = ['UPDATE_PASSWORD', 'VERIFY_EMAIL'];
    expect(await answer(admin('PUT', `/crownlabs/users/${noMail}/execute-actions-email`, actions))).toEqual({
      status: 400,
      body: { errorMessage: 'User email missing' },
    });
    expect(await answer(admin('PUT', `/crownlabs/users/${disabled}/execute-actions-email`, actions))).toEqual({
      status: 400,
      body: { errorMessage: 'User is disabled' },
    });
    expect(await answer(admin('PUT', `/crownlabs/users/missing/execute-actions-email`, actions))).toEqual({
      status: 404,
      body: { error: 'User not found' },
    });
  });
});

describe('client role mappings', () => {
  it('accepts only roles of the client named with their id', async () => {
    const user = double.addUser('crownlabs', { username: 'mapped' });
    const role = double.addClientRole('crownlabs', 'k8s', 'workspace-m:user');
    const path = `/crownlabs/users/${user}/role-mappings/clients/${clientId()}`;

    expect(await answer(admin('POST', path, [{ name: role.name }]))).toEqual({ status: 404, body: { error: 'Role not found' } });
    expect(await answer(admin('POST', path, [{ name: role.name, id: 'wrong' }]))).toEqual({ status: 404, body: { error: 'Role not found' } });
    expect(await answer(admin('POST', path, { name: role.name, id: role.id }))).toEqual({ status: 400, body: { error: 'unknown_error' } });
    expect((await admin('POST', path, [{ name: role.name, id: role.id }])).status).toBe(204);
    expect(await answer(admin('GET', path))).toMatchObject({ status: 200, body: [{ name: role.name, id: role.id }] });
    expect((await admin('DELETE', path, [{ name: role.name, id: role.id }])).status).toBe(204);
    expect(double.userClientRoles('crownlabs', 'mapped', 'k8s')).toEqual([]);
  });
});

describe('fault injection', () => {
  it('fails the next N matching requests, then answers normally', async () => {
    double.failNext({ method: 'GET', path: '/admin/realms/crownlabs/users', times: 2, status: 503, body: 'down for maintenance' });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await admin('GET', '/crownlabs/users')).status);
    expect(statuses).toEqual([503, 503, 200]);
    expect(double.requestsTo('GET', '/admin/realms/crownlabs/users').slice(-3).map((entry) => entry.outcome)).toEqual([
      'injected-fault',
      'injected-fault',
      'handled',
    ]);
  });

  it('goes down (connection refused) and comes back on the same port with its state', async () => {
    const url = double.url;
    await double.takeDown();
    await expect(admin('GET', '/crownlabs/users')).rejects.toThrow(/fetch failed/);
    await double.bringUp();
    expect(double.url).toBe(url);
    expect((await admin('GET', '/crownlabs/users?username=mario.rossi')).status).toBe(200);
  });
});
