// The status the controller sends at each API level (docs/behaviour.md §16.2), and what it reads back.
import { describe, expect, it } from 'vitest';
import { instanceStatusFacts, instanceWireStatus, tenantWireStatus, type InstanceStatusFacts, type TenantStatusFacts } from '../../../src/model/status-shape.ts';
import { statusPatch } from '../../../src/controller/apply-set.ts';

const computed: InstanceStatusFacts = {
  phase: 'Ready',
  url: 'https://crownlabs.test/instance/u/',
  ip: '10.0.0.7',
  initialReadyTime: '12s',
  environments: [
    { name: 'desk', phase: 'Ready', ip: '10.0.0.7' },
    { name: 'db', phase: 'Ready', ip: '10.0.0.8' },
  ],
};

const tenant: TenantStatusFacts = {
  personalNamespace: { name: 'tenant-a', created: true },
  sandboxNamespace: { name: '', created: false },
  failingWorkspaces: [],
  subscriptions: { keycloak: 'Ok' },
  ready: true,
  quota: { cpu: '4', memory: '8Gi', instances: 2 },
  keycloak: { userCreated: { created: false }, userConfirmed: false, userSynchronized: false },
  personalWorkspaceCreated: false,
};

describe('2e8aeb9: the status as before the levels', () => {
  it('Instance: top-level phase, url, ip, initialReadyTime; no environments list, same key order', () => {
    const wire = instanceWireStatus('2e8aeb9', computed, undefined);
    expect(JSON.stringify(wire)).toBe('{"phase":"Ready","url":"https://crownlabs.test/instance/u/","ip":"10.0.0.7","initialReadyTime":"12s"}');
    expect(instanceWireStatus('2e8aeb9', { automation: { lastCheckTime: 't' } }, {})).toEqual({ automation: { lastCheckTime: 't' } });
  });
  it('Tenant: quota kept; keycloak and personalWorkspaceCreated not sent', () => {
    expect(JSON.stringify(tenantWireStatus('2e8aeb9', tenant))).toBe(
      '{"personalNamespace":{"name":"tenant-a","created":true},"sandboxNamespace":{"name":"","created":false},"failingWorkspaces":[],"subscriptions":{"keycloak":"Ok"},"ready":true,"quota":{"cpu":"4","memory":"8Gi","instances":2}}',
    );
  });
});

describe('e62be9e', () => {
  it('Instance: phase and url top-level, ip and initialReadyTime per environment, no top-level ip', () => {
    expect(instanceWireStatus('e62be9e', computed, undefined)).toEqual({
      phase: 'Ready',
      url: 'https://crownlabs.test/instance/u/',
      environments: [
        { name: 'desk', phase: 'Ready', ip: '10.0.0.7', initialReadyTime: '12s' },
        { name: 'db', phase: 'Ready', ip: '10.0.0.8', initialReadyTime: '12s' },
      ],
    });
  });

  it('an environment entry keeps what the object holds (initialReadyTime, automation) and loses an empty phase or ip', () => {
    const current = { phase: 'Ready', environments: [{ name: 'desk', phase: 'Ready', ip: '10.0.0.7', initialReadyTime: '12s', automation: { lastCheckTime: 'a' } }] };
    const wire = instanceWireStatus('e62be9e', { phase: 'Starting', url: undefined, ip: undefined, environments: [{ name: 'desk', phase: '' }] }, current);
    expect(wire).toEqual({ phase: 'Starting', url: undefined, environments: [{ name: 'desk', initialReadyTime: '12s', automation: { lastCheckTime: 'a' } }] });
  });

  it('an automation write merges into every environment held, keeping their other fields', () => {
    const current = { environments: [{ name: 'desk', phase: 'Ready', automation: { submissionTime: 's' } }, { name: 'db', phase: 'Ready' }] };
    const wire = instanceWireStatus('e62be9e', { automation: { lastCheckTime: 'l', terminationTime: 't' } }, current);
    expect(wire).toEqual({
      environments: [
        { name: 'desk', phase: 'Ready', automation: { submissionTime: 's', lastCheckTime: 'l', terminationTime: 't' } },
        { name: 'db', phase: 'Ready', automation: { lastCheckTime: 'l', terminationTime: 't' } },
      ],
    });
    // And the patch sends the list only when it differs from what is held.
    expect(statusPatch(wire, wire)).toBeUndefined();
    expect(statusPatch(wire, current)).toEqual(wire);
  });

  it('Tenant: no quota; keycloak and personalWorkspaceCreated sent', () => {
    const wire = tenantWireStatus('e62be9e', tenant);
    expect(wire).not.toHaveProperty('quota');
    expect(wire).toMatchObject({ keycloak: tenant.keycloak, personalWorkspaceCreated: false, ready: true });
  });
});

describe('reading back', () => {
  it('reads either shape into the same facts', () => {
    const old = instanceStatusFacts({ phase: 'Ready', url: 'u', ip: '1.2.3.4', initialReadyTime: '3s', automation: { lastCheckTime: 'l' } });
    const neu = instanceStatusFacts({ phase: 'Ready', url: 'u', environments: [{ name: 'desk', phase: 'Ready', ip: '1.2.3.4', initialReadyTime: '3s', automation: { lastCheckTime: 'l' } }] });
    expect(old).toEqual({ phase: 'Ready', url: 'u', ip: '1.2.3.4', initialReadyTime: '3s', automation: { lastCheckTime: 'l' } });
    expect(neu).toEqual({ ...old, environments: [{ name: 'desk', phase: 'Ready', ip: '1.2.3.4' }] });
    expect(instanceStatusFacts(undefined)).toEqual({});
  });
  it('what e62be9e sends reads back as what was computed', () => {
    const back = instanceStatusFacts(instanceWireStatus('e62be9e', computed, undefined));
    expect(back).toEqual({ ...computed });
  });
});
