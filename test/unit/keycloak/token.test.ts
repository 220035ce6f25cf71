import { afterEach, describe, expect, it } from 'vitest';
import type { KeycloakUserSpec } from '../../../src/integrations/keycloak/index.ts';
import { KeycloakClient, decodeJwtExpiry } from '../../../src/integrations/keycloak/index.ts';
import { KeycloakDouble } from '../../support/keycloak-double.ts';
import { TARGET_REALM, closeFixtures, sleep, startFixture } from './fixture.ts';

afterEach(closeFixtures);

const TOKEN_PATH = '/realms/master/protocol/openid-connect/token';
const alice: KeycloakUserSpec = { username: 'alice', firstName: 'Alice', lastName: 'A', email: 'alice@example.org', wantedRoles: [] };

/** A clock the test moves by hand. */
function manualClock() {
  let now = Date.now();
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('docs/behaviour.md §2.1 admin login', () => {
  it('logs in with the password grant of admin-cli at the login realm, and reuses the token', async () => {
    const { double, client } = await startFixture();

    await client.syncUser(alice);
    await client.ensureWorkspaceRoles('netgroup', 'Networks');

    const logins = double.requestsTo('POST', TOKEN_PATH);
    expect(logins).toHaveLength(1);
    expect(logins[0]?.body).toEqual({ grant_type: 'password', client_id: 'admin-cli', username: 'admin' });
    expect(client.tokenStatus()).toMatchObject({ hasValidToken: true, logins: 1, consecutiveFailures: 0 });
  });

  it('shares one login between concurrent operations', async () => {
    const { double, client } = await startFixture();
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) => client.syncUser({ ...alice, username: name, email: `${name}@example.org` })),
    );
    expect(results.every((result) => result.ok)).toBe(true);
    expect(double.tokensIssued).toBe(1);
  });

  it('reports bad credentials clearly, without throwing, and backs off before trying again', async () => {
    const clock = manualClock();
    const { double, client } = await startFixture({ config: { password: 'wrong' }, client: { now: clock.now } });

    const first = await client.syncUser(alice);
    expect(first.ok).toBe(false);
    expect(first.errors).toHaveLength(1);
    expect(first.errors[0]).toMatchObject({
      kind: 'login',
      operation: 'login to realm "master" as "admin"',
      status: 401,
      message: expect.stringMatching(/^invalid_grant: Invalid user credentials \(1 consecutive failed login\(s\); next attempt in \d+ ms\)$/),
    });

    // Within the back-off window Keycloak is not asked again; callers get the same diagnosis.
    const second = await client.ensureWorkspaceRoles('netgroup', 'Networks');
    expect(second.errors[0]).toMatchObject({ kind: 'login', status: 401 });
    expect(double.requestsTo('POST', TOKEN_PATH)).toHaveLength(1);
    expect(double.writes()).toEqual([]);

    clock.advance(20);
    await client.login();
    expect(double.requestsTo('POST', TOKEN_PATH)).toHaveLength(2);
    expect(client.tokenStatus()).toMatchObject({ hasValidToken: false, consecutiveFailures: 2 });
  });

  it('reports an unknown login realm with Keycloak\'s answer', async () => {
    const { client } = await startFixture({ config: { loginRealm: 'nope' } });
    const result = await client.login();
    expect(result.errors[0]).toMatchObject({ kind: 'login', status: 404, message: expect.stringContaining('Realm does not exist') });
  });

  it('doubles the wait after each failed login, up to the maximum', async () => {
    const clock = manualClock();
    const { double, client } = await startFixture({ client: { now: clock.now, loginBackoff: { initialMs: 1_000, maxMs: 5_000 } } });
    await double.takeDown();

    const waits: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await client.login();
      const status = client.tokenStatus();
      const wait = (status.nextAttemptAt ?? 0) - clock.now();
      waits.push(wait);
      clock.advance(wait);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(client.tokenStatus().consecutiveFailures).toBe(5);
  });
});

describe('docs/behaviour.md §2.1 token upkeep', () => {
  it('logs in again before the token expires, without waiting for a 401', async () => {
    const clock = manualClock();
    const { double, client } = await startFixture({ client: { now: clock.now } });
    await client.syncUser(alice);

    clock.advance(20_000); // 60 s token, renewed in its last 30 s
    await client.syncUser(alice);
    expect(double.tokensIssued).toBe(1);

    clock.advance(15_000);
    await client.syncUser(alice);
    expect(double.tokensIssued).toBe(2);
    expect(double.requests.filter((entry) => entry.status === 401)).toEqual([]);
  });

  it('logs in again and retries once when Keycloak rejects an expired token', async () => {
    const { double, client } = await startFixture();
    await client.syncUser(alice);
    double.advanceClock(61_000); // Keycloak's clock says the token is dead; ours does not know yet

    const result = await client.ensureWorkspaceRoles('netgroup', 'Networks');

    expect(result).toMatchObject({ ok: true, created: ['workspace-netgroup:manager', 'workspace-netgroup:user'] });
    expect(double.tokensIssued).toBe(2);
    expect(double.requests.filter((entry) => entry.status === 401)).toHaveLength(1);
  });

  it('recovers when Keycloak forgets every token (restart with new keys)', async () => {
    const { double, client } = await startFixture();
    await client.syncUser(alice);
    double.revokeTokens();
    const result = await client.syncUser({ ...alice, firstName: 'Alicia' });
    expect(result).toMatchObject({ ok: true, updated: true });
    expect(double.tokensIssued).toBe(2);
  });

  it('keeps using a still-valid token when renewing it fails', async () => {
    const clock = manualClock();
    const { double, client } = await startFixture({ client: { now: clock.now } });
    await client.login();
    clock.advance(40_000);
    double.failNext({ path: TOKEN_PATH, status: 503, body: 'Service Unavailable' });

    const result = await client.syncUser(alice);

    expect(result).toMatchObject({ ok: true, created: true });
    expect(client.tokenStatus()).toMatchObject({ hasValidToken: true, consecutiveFailures: 1, lastError: expect.objectContaining({ status: 503 }) });
  });

  it('reads the expiry of a JWT', async () => {
    const double = await KeycloakDouble.start();
    try {
      const response = await fetch(`${double.url}${TOKEN_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'admin', password: 'admin-secret' }),
      });
      const { access_token: token } = (await response.json()) as { access_token: string };
      const exp = decodeJwtExpiry(token);
      expect(exp).toBeGreaterThan(Date.now() / 1000 + 50);
      expect(exp).toBeLessThanOrEqual(Date.now() / 1000 + 60);
    } finally {
      await double.close();
    }
    expect(decodeJwtExpiry('not-a-jwt')).toBeUndefined();
    expect(decodeJwtExpiry('a.%%%.c')).toBeUndefined();
  });

  it('renews in the background and survives Keycloak being down meanwhile', async () => {
    const { double, client } = await startFixture();
    await double.takeDown();
    const stop = client.startTokenUpkeep(10_000);
    try {
      await waitFor(() => client.tokenStatus().consecutiveFailures >= 2);
      expect(client.tokenStatus()).toMatchObject({ hasValidToken: false, lastError: expect.objectContaining({ kind: 'login' }) });
      await double.bringUp();
      await waitFor(() => client.tokenStatus().hasValidToken);
      expect(client.tokenStatus().consecutiveFailures).toBe(0);
    } finally {
      stop();
    }
  });
});

describe('docs/behaviour.md Decision 5 Keycloak down', () => {
  it('reports failures without throwing while Keycloak is down, and succeeds once it is back', async () => {
    const { double, client } = await startFixture();
    await double.takeDown();

    const down = await client.syncUser(alice);
    expect(down.ok).toBe(false);
    expect(down.errors).toEqual([
      expect.objectContaining({ kind: 'login', message: expect.stringMatching(/^unreachable: fetch failed: .*ECONNREFUSED/) }),
    ]);
    const roles = await client.ensureWorkspaceRoles('netgroup', 'Networks');
    expect(roles.ok).toBe(false);
    const deletion = await client.deleteUser('alice');
    expect(deletion).toMatchObject({ ok: false, deleted: false });

    await double.bringUp();
    await sleep(120); // past the longest back-off of the fixture
    expect(await client.syncUser(alice)).toMatchObject({ ok: true, created: true });
    expect(await client.ensureWorkspaceRoles('netgroup', 'Networks')).toMatchObject({ ok: true });
  });

  it('reports each step that fails when Keycloak goes away after the login', async () => {
    const { double, client } = await startFixture();
    await client.login();
    await double.takeDown();

    const result = await client.ensureWorkspaceRoles('netgroup', 'Networks');

    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([expect.objectContaining({ kind: 'unreachable', operation: 'resolve client "k8s"' })]);
    await double.bringUp();
    expect(await client.ensureWorkspaceRoles('netgroup', 'Networks')).toMatchObject({ ok: true });
  });

  it('reports answers slower than the request timeout as timeouts', async () => {
    const { double, client } = await startFixture({ config: { requestTimeoutMs: 500 } });
    double.delayNext({ method: 'GET', path: `/admin/realms/${TARGET_REALM}/users`, ms: 2_000 });

    const result = await client.syncUser(alice);

    expect(result.errors).toEqual([
      expect.objectContaining({ kind: 'timeout', operation: 'find user alice', message: 'no answer within 500 ms' }),
    ]);
    expect(await client.syncUser(alice)).toMatchObject({ ok: true });
  });

  it('reports 5xx answers with their status and text', async () => {
    const { double, client } = await startFixture();
    double.failNext({ method: 'GET', path: `/admin/realms/${TARGET_REALM}/users`, status: 502, body: '<html>Bad Gateway</html>' });
    const result = await client.deleteUser('alice');
    expect(result.errors).toEqual([
      expect.objectContaining({
        kind: 'http',
        status: 502,
        method: 'GET',
        path: `/admin/realms/${TARGET_REALM}/users?username=alice&exact=true`,
        message: '<html>Bad Gateway</html>',
      }),
    ]);
  });
});

describe('base URL', () => {
  it('works with the legacy /auth prefix when the URL includes it (and a trailing slash)', async () => {
    const { double, config } = await startFixture({ double: { pathPrefix: '/auth' } });
    expect(double.url).toMatch(/\/auth$/);
    const client = new KeycloakClient({ ...config, url: `${double.url}/` });
    expect(await client.syncUser(alice)).toMatchObject({ ok: true, created: true });
    expect(double.requestsTo('POST', TOKEN_PATH)).toHaveLength(1);
  });

  it('tells a missing /auth prefix apart from bad credentials', async () => {
    const { double, config } = await startFixture({ double: { pathPrefix: '/auth' } });
    const withoutPrefix = new KeycloakClient({ ...config, url: `${double.url.replace(/\/auth$/, '')}/` });
    const result = await withoutPrefix.login();
    expect(result.errors[0]).toMatchObject({ kind: 'login', status: 404, path: TOKEN_PATH });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}
