// The status the controller sends at each API level (docs/behaviour.md §16.2), and what it reads back.
import { describe, expect, it } from 'vitest';
import { instanceStatusFacts, instanceWireStatus, tenantWireStatus, type InstanceStatusFacts, type TenantStatusFacts } from '../../../src/model/status-shape.ts';
import { statusPatch } from '../../../src/controller/apply-set.ts';
import type { InstancePhase } from '../../../src/inputs/types.ts';

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

describe('2e8aeb9: the Instance-wide fields derived from the environments (what the reconciler sends)', () => {
  const observed = (phases: InstancePhase[], extra: Partial<InstanceStatusFacts> = {}): InstanceStatusFacts => ({
    url: 'https://crownlabs.test/instance/u/',
    environments: phases.map((phase, i) => ({ name: `env${i}`, phase, ip: `10.0.0.${i + 1}`, expositionAccepted: true })),
    age: '12s',
    nodeName: 'node-a',
    nodeSelector: { zone: 'a' },
    ...extra,
  });
  it('the least advanced phase, the first IP, initialReadyTime once Ready; same keys and order as before', () => {
    expect(JSON.stringify(instanceWireStatus('2e8aeb9', observed(['Ready', 'Ready']), undefined))).toBe(
      '{"phase":"Ready","url":"https://crownlabs.test/instance/u/","ip":"10.0.0.1","initialReadyTime":"12s"}',
    );
    expect(JSON.stringify(instanceWireStatus('2e8aeb9', observed(['Ready', 'Starting']), undefined))).toBe('{"phase":"Starting","url":"https://crownlabs.test/instance/u/","ip":"10.0.0.1"}');
  });
  it('initialReadyTime is recorded once', () => {
    expect(instanceWireStatus('2e8aeb9', observed(['Ready']), { initialReadyTime: '3s' })).not.toHaveProperty('initialReadyTime');
  });
  it('a stopped Instance: empty phase, IP and URL are removed (undefined)', () => {
    const wire = instanceWireStatus('2e8aeb9', { url: undefined, environments: [{ name: 'desk', phase: '', ip: undefined }] }, { phase: 'Ready', ip: '10.0.0.1' });
    expect(wire).toStrictEqual({ phase: undefined, url: undefined, ip: undefined });
  });
  it('a failure naming the environments is CreationLoopBackoff and leaves the IP alone', () => {
    expect(instanceWireStatus('2e8aeb9', { environments: [{ name: 'desk', phase: 'CreationLoopBackoff' }] }, {})).toStrictEqual({ phase: 'CreationLoopBackoff' });
    expect(instanceWireStatus('2e8aeb9', { phase: 'CreationLoopBackoff' }, {})).toStrictEqual({ phase: 'CreationLoopBackoff' });
  });
});

describe('e62be9e', () => {
  const observed: InstanceStatusFacts = {
    url: 'https://crownlabs.test/instance/u/',
    environments: [
      { name: 'desk', phase: 'Ready', ip: '10.0.0.7', expositionAccepted: true },
      { name: 'db', phase: 'Starting', ip: undefined, expositionAccepted: false },
    ],
    age: '12s',
    nodeName: 'node-a',
    nodeSelector: { zone: 'a' },
  };

  it('Instance: phase, url and the node top-level; phase, ip, expositionAccepted and initialReadyTime per environment', () => {
    expect(instanceWireStatus('e62be9e', observed, undefined)).toStrictEqual({
      phase: 'Running',
      url: 'https://crownlabs.test/instance/u/',
      environments: [
        { name: 'desk', phase: 'Ready', ip: '10.0.0.7', expositionAccepted: true, initialReadyTime: '12s' },
        { name: 'db', phase: 'Starting', expositionAccepted: false },
      ],
      nodeName: 'node-a',
      nodeSelector: { zone: 'a' },
    });
  });

  it("each environment's initialReadyTime is recorded once, the first time it is Ready", () => {
    const current = { environments: [{ name: 'desk', phase: 'Ready', initialReadyTime: '5s' }, { name: 'db', phase: 'Starting' }] };
    const later = { ...observed, age: '40s', environments: observed.environments!.map((e) => ({ ...e, phase: 'Ready' as const })) };
    const wire = instanceWireStatus('e62be9e', later, current);
    expect(wire.phase).toBe('Ready');
    expect((wire.environments as { initialReadyTime?: string }[]).map((e) => e.initialReadyTime)).toEqual(['5s', '40s']);
  });

  it('the Instance phase follows e62be9e\'s rule over the entries', () => {
    const phases = (...p: InstancePhase[]) => ({ environments: p.map((phase, i) => ({ name: `env${i}`, phase })) });
    const rows: [InstancePhase[], InstancePhase | undefined][] = [
      [['Ready', 'Ready'], 'Ready'],
      [['Ready', 'Starting'], 'Running'],
      [['Importing'], 'Starting'],
      [['Off', 'Off'], 'Off'],
      [['Stopping', 'Off'], 'Stopping'],
      [['ResourceQuotaExceeded', 'Ready'], 'ResourceQuotaExceeded'],
      [['CreationLoopBackoff'], 'Failed'],
      [['', ''], undefined],
    ];
    for (const [p, expected] of rows) expect(instanceWireStatus('e62be9e', phases(...p), undefined).phase).toBe(expected);
  });

  it('an environment entry keeps what the object holds (automation, the default expositionAccepted) and loses an empty phase or ip', () => {
    const current = { phase: 'Ready', environments: [{ name: 'desk', phase: 'Ready', ip: '10.0.0.7', initialReadyTime: '12s', expositionAccepted: false, automation: { lastCheckTime: 'a' } }] };
    const wire = instanceWireStatus('e62be9e', { url: undefined, environments: [{ name: 'desk', phase: '', ip: undefined }] }, current);
    expect(wire).toStrictEqual({ phase: undefined, url: undefined, environments: [{ name: 'desk', initialReadyTime: '12s', expositionAccepted: false, automation: { lastCheckTime: 'a' } }] });
  });

  it('a failure: every entry CreationLoopBackoff, their IPs kept, the Instance Failed; with none held and none named, nothing', () => {
    const current = { phase: 'Ready', environments: [{ name: 'desk', phase: 'Ready', ip: '10.0.0.7' }] };
    const failed = { name: 'desk', phase: 'CreationLoopBackoff', ip: '10.0.0.7' };
    expect(instanceWireStatus('e62be9e', { phase: 'CreationLoopBackoff' }, current)).toStrictEqual({ phase: 'Failed', environments: [failed] });
    expect(instanceWireStatus('e62be9e', { environments: [{ name: 'desk', phase: 'CreationLoopBackoff' }] }, current)).toStrictEqual({ phase: 'Failed', environments: [failed] });
    expect(instanceWireStatus('e62be9e', { environments: [{ name: 'desk', phase: 'CreationLoopBackoff' }] }, {})).toStrictEqual({ phase: 'Failed', environments: [{ name: 'desk', phase: 'CreationLoopBackoff' }] });
    expect(statusPatch(instanceWireStatus('e62be9e', { phase: 'CreationLoopBackoff' }, {}), {})).toBeUndefined();
  });

  it('nodeSelector replaces the map held (a merge patch would merge the two); nodeName and nodeSelector removed when undefined', () => {
    const current = { nodeName: 'node-a', nodeSelector: { zone: 'a', disk: 'ssd' } };
    const moved = instanceWireStatus('e62be9e', { nodeName: 'node-b', nodeSelector: { zone: 'b' } }, current);
    expect(statusPatch(moved, current)).toStrictEqual({ nodeName: 'node-b', nodeSelector: { zone: 'b', disk: null } });
    expect(statusPatch(instanceWireStatus('e62be9e', { nodeName: undefined, nodeSelector: undefined }, current), current)).toStrictEqual({ nodeName: null, nodeSelector: null });
    // Keys not given are left as they are (running, nothing placed yet).
    expect(instanceWireStatus('e62be9e', { url: 'u' }, current)).toStrictEqual({ url: 'u' });
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
  it('what e62be9e sends reads back as the facts the reconcilers read', () => {
    const wire = instanceWireStatus('e62be9e', { url: 'u', environments: [{ name: 'desk', phase: 'Ready', ip: '10.0.0.7' }, { name: 'db', phase: 'Ready', ip: '10.0.0.8' }], age: '12s' }, undefined);
    expect(instanceStatusFacts(wire)).toEqual({
      phase: 'Ready',
      url: 'u',
      ip: '10.0.0.7',
      initialReadyTime: '12s',
      environments: [
        { name: 'desk', phase: 'Ready', ip: '10.0.0.7' },
        { name: 'db', phase: 'Ready', ip: '10.0.0.8' },
      ],
    });
  });
});
