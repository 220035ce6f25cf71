import { describe, expect, it } from 'vitest';
import type { KeycloakConfig } from '../../../src/integrations/keycloak/index.ts';
import {
  KeycloakClient,
  createKeycloakClient,
  formatKeycloakError,
  keycloakEnabled,
  validateKeycloakConfig,
} from '../../../src/integrations/keycloak/index.ts';

const complete: KeycloakConfig = {
  url: 'https://sso.example.org',
  loginRealm: 'master',
  targetRealm: 'crownlabs',
  targetClientId: 'k8s',
  username: 'tenant-operator',
  password: 'secret',
};

describe('docs/behaviour.md §2.1 Keycloak flags', () => {
  it('an empty URL disables the integration', () => {
    expect(keycloakEnabled({ url: '' })).toBe(false);
    expect(keycloakEnabled({ url: '  ' })).toBe(false);
    expect(keycloakEnabled(undefined)).toBe(false);
    expect(keycloakEnabled(complete)).toBe(true);
    expect(createKeycloakClient({ ...complete, url: '' })).toBeUndefined();
    expect(createKeycloakClient(complete)).toBeInstanceOf(KeycloakClient);
  });

  it('with a URL, the realms, the client and the credentials are all required', () => {
    expect(validateKeycloakConfig(complete)).toEqual([]);
    expect(validateKeycloakConfig({ ...complete, url: '' , password: '' })).toEqual([]);
    expect(validateKeycloakConfig({ ...complete, loginRealm: '', password: '', url: 'ftp://x' })).toEqual([
      'keycloak url must be http or https, got "ftp://x"',
      'keycloak login realm (loginRealm) is required when the keycloak url is set',
      'keycloak admin password (password) is required when the keycloak url is set',
    ]);
    expect(validateKeycloakConfig({ ...complete, url: 'not a url' })).toEqual(['keycloak url is not a valid URL: "not a url"']);
  });

  it('refuses to build a client from an incomplete configuration (a start-up error)', () => {
    expect(() => new KeycloakClient({ ...complete, targetClientId: '' })).toThrow(/target client \(targetClientId\) is required/);
    expect(() => new KeycloakClient({ ...complete, url: '' })).toThrow(/url is empty/);
  });
});

describe('error formatting', () => {
  it('puts operation, request, status and Keycloak text on one line', () => {
    expect(
      formatKeycloakError({
        kind: 'http',
        operation: 'create role workspace-a:user',
        method: 'POST',
        path: '/admin/realms/crownlabs/clients/1/roles',
        status: 409,
        message: 'Role with name workspace-a:user already exists',
      }),
    ).toBe('create role workspace-a:user (POST /admin/realms/crownlabs/clients/1/roles): 409 Role with name workspace-a:user already exists');
    expect(formatKeycloakError({ kind: 'ambiguous', operation: 'find user x', message: '2 users' })).toBe('find user x: 2 users');
  });
});
