/** A Keycloak double plus a client configured against it, for the Keycloak unit tests. */
import type { KeycloakClientOptions, KeycloakConfig } from '../../../src/integrations/keycloak/index.ts';
import { KeycloakClient } from '../../../src/integrations/keycloak/index.ts';
import type { KeycloakDoubleOptions } from '../../support/keycloak-double.ts';
import { KeycloakDouble } from '../../support/keycloak-double.ts';

export const TARGET_REALM = 'crownlabs';
export const TARGET_CLIENT = 'k8s';
export const ADMIN_PASSWORD = 'admin-secret';

export interface Fixture {
  readonly double: KeycloakDouble;
  readonly config: KeycloakConfig;
  readonly client: KeycloakClient;
}

const started: KeycloakDouble[] = [];

export async function startFixture(
  options: {
    readonly double?: KeycloakDoubleOptions;
    readonly config?: Partial<KeycloakConfig>;
    readonly client?: KeycloakClientOptions;
  } = {},
): Promise<Fixture> {
  const double = await KeycloakDouble.start({ targetRealm: TARGET_REALM, targetClientId: TARGET_CLIENT, ...options.double });
  started.push(double);
  const config: KeycloakConfig = {
    url: double.url,
    loginRealm: 'master',
    targetRealm: TARGET_REALM,
    targetClientId: TARGET_CLIENT,
    username: 'admin',
    password: ADMIN_PASSWORD,
    requestTimeoutMs: 2_000,
    ...options.config,
  };
  // Short back-off so that recovery tests do not wait for seconds.
  const client = new KeycloakClient(config, { loginBackoff: { initialMs: 20, maxMs: 100 }, ...options.client });
  return { double, config, client };
}

/** Closes every double started since the last call; for afterEach. */
export async function closeFixtures(): Promise<void> {
  await Promise.all(started.splice(0).map((double) => double.close()));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
