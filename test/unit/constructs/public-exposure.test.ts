// Public exposure rendered (docs/behaviour.md §18): the LoadBalancer Service and its NetworkPolicy
// of a running Instance, nothing when stopped, and a warning naming the field when refused.
import { describe, expect, it } from 'vitest';
import { inventoryFrom, lab, render, testConfig } from '../../support/lab.ts';
import { compose } from '../../../src/compose/compose.ts';
import { lookupKeysOf } from '../../../src/compose/dependency-index.ts';
import { PUBLIC_EXPOSURE_KEY } from '../../../src/inputs/lookups.ts';
import { renderPlatform } from '../../../src/platform/install.ts';
import { PE_BASE_PORT } from '../../../src/model/public-exposure.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const PE_CONFIG = {
  apiLevel: 'e62be9e' as const,
  publicExposureIpPool: ['172.18.0.240-172.18.0.241'],
  publicExposureCommonAnnotations: { 'metallb.universe.tf/allow-shared-ip': 'pe' },
  publicExposureCommonLabels: { 'metallb.universe.tf/ip-pool': 'public' },
};
const PORTS = [
  { name: 'web', port: 0, targetPort: 8080 },
  { name: 'ssh', port: 2222, targetPort: 22, protocol: 'TCP' },
];

function renderPe(opts: { running?: boolean; allow?: boolean; envs?: number; config?: Record<string, unknown>; ports?: unknown[] } = {}) {
  const env = { environmentType: 'Container', guiEnabled: true };
  const text = lab({
    env: Array.from({ length: opts.envs ?? 1 }, () => env),
    template: { allowPublicExposure: opts.allow ?? true },
    instance: { running: opts.running ?? true, publicExposure: { ports: opts.ports ?? PORTS } },
  });
  return render(text, testConfig({ ...PE_CONFIG, ...opts.config }), { schemas: true });
}

describe('a running Instance with public exposure', () => {
  it('gets a LoadBalancer Service asking for its address by annotation, with the allocated ports', () => {
    const r = renderPe();
    const svc = r.get('Service', 'inst-one-pe') as Any;
    expect(svc.metadata.namespace).toBe('tenant-john-doe');
    expect(svc.metadata.annotations).toEqual({ 'metallb.universe.tf/allow-shared-ip': 'pe', 'metallb.universe.tf/loadBalancerIPs': '172.18.0.240', ...composerAnnotationsOf(svc) });
    expect(svc.metadata.labels).toMatchObject({ 'crownlabs.polito.it/component': 'pe', 'metallb.universe.tf/ip-pool': 'public' });
    expect(svc.spec).toEqual({
      type: 'LoadBalancer',
      selector: { 'crownlabs.polito.it/instance': 'inst.one', 'crownlabs.polito.it/template': 'tmpl', 'crownlabs.polito.it/tenant': 'john.doe' },
      ports: [
        { name: 'ssh', port: 2222, targetPort: 22, protocol: 'TCP' },
        { name: 'web', port: PE_BASE_PORT, targetPort: 8080, protocol: 'TCP' },
      ],
    });
    expect(r.problems).toEqual([]);
  });

  it('and a NetworkPolicy letting the target ports in to its Pods', () => {
    const np = renderPe().get('NetworkPolicy', 'crownlabs-allow-publicexposure-ingress-traffic-inst.one') as Any;
    expect(np.metadata.labels).toMatchObject({ 'crownlabs.polito.it/instance': 'inst.one', 'crownlabs.polito.it/template': 'tmpl', 'crownlabs.polito.it/tenant': 'john.doe' });
    expect(np.spec).toEqual({
      podSelector: { matchLabels: { 'crownlabs.polito.it/instance': 'inst.one' } },
      ingress: [{ ports: [{ port: 22, protocol: 'TCP' }, { port: 8080, protocol: 'TCP' }] }],
      policyTypes: ['Ingress'],
    });
  });

  it('the Service selects the Pods of the environment', () => {
    const r = renderPe();
    const selector = (r.get('Service', 'inst-one-pe') as Any).spec.selector as Record<string, string>;
    const pod = (r.get('Deployment', 'inst-one-env0') as Any).spec.template.metadata.labels as Record<string, string>;
    for (const [k, v] of Object.entries(selector)) expect(pod[k], k).toBe(v);
  });
});

const peObjects = (r: ReturnType<typeof renderPe>) => r.objects.filter((o) => o.metadata.name.endsWith('-pe') || o.metadata.name.startsWith('crownlabs-allow-publicexposure'));

describe('no public exposure rendered', () => {
  it('a stopped Instance has neither Service nor NetworkPolicy, and no warning', () => {
    const r = renderPe({ running: false });
    expect(peObjects(r)).toEqual([]);
    expect(r.problems.filter((p) => p.field === 'spec.publicExposure.ports')).toEqual([]);
  });
  // [what, options, message part]
  const refused: [string, Parameters<typeof renderPe>[0], string][] = [
    ['the Template does not allow it', { allow: false }, 'does not allow public exposure'],
    ['the Template has two environments', { envs: 2 }, 'multiple environments'],
    ['no pool is configured', { config: { publicExposureIpPool: [] } }, 'not enabled'],
  ];
  it.each(refused)('%s: a warning naming the document and field, the rest of the Instance rendered', (_what, opts, message) => {
    const r = renderPe(opts);
    expect(peObjects(r)).toEqual([]);
    const warning = r.problems.find((p) => p.field === 'spec.publicExposure.ports');
    expect(warning).toMatchObject({ severity: 'warning', kind: 'Instance', name: 'tenant-john-doe/inst.one' });
    expect(warning?.message).toContain(message);
    expect(r.objects.some((o) => o.kind === 'Deployment')).toBe(true);
  });
});

describe('the file sinks allocate every asking Instance from the inputs', () => {
  const second = (ports: unknown[]) =>
    JSON.stringify({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'inst.two', namespace: 'tenant-john-doe' },
      spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'tmpl', namespace: 'workspace-tea' }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'john.doe' }, publicExposure: { ports } },
    });
  const text = (extra: string) => lab({ env: { environmentType: 'Container', guiEnabled: true }, template: { allowPublicExposure: true }, instance: { publicExposure: { ports: PORTS } }, extra });
  it('no two Instances get the same address and port; an explicit port taken moves to the next address', () => {
    const r = render(text(second([{ name: 'web', port: 0, targetPort: 80 }, { name: 'ssh', port: 2222, targetPort: 22 }])), testConfig(PE_CONFIG));
    const one = (r.get('Service', 'inst-one-pe') as Any);
    const two = (r.get('Service', 'inst-two-pe') as Any);
    const ip = (s: Any) => s.metadata.annotations['metallb.universe.tf/loadBalancerIPs'];
    expect([ip(one), ip(two)]).toEqual(['172.18.0.240', '172.18.0.241']);
    expect(two.spec.ports.map((p: Any) => p.port)).toEqual([2222, PE_BASE_PORT]);
  });
  it('an explicit port no address has free: that Instance alone is refused, with a warning', () => {
    const r = render(text(second([{ name: 'ssh', port: 2222, targetPort: 22 }])), testConfig({ ...PE_CONFIG, publicExposureIpPool: ['10.0.0.1'] }));
    expect(r.find('Service', 'inst-one-pe')).toBeDefined();
    expect(r.find('Service', 'inst-two-pe')).toBeUndefined();
    expect(r.problems.find((p) => p.field === 'spec.publicExposure.ports')).toMatchObject({ severity: 'warning', name: 'tenant-john-doe/inst.two', message: expect.stringContaining('no available IP can support all requested ports') });
  });
  it('an Instance\'s set depends on every Instance and Template taking part (watch mode renders it again when one starts asking)', () => {
    const inv = inventoryFrom(text(second([{ name: 'web', port: 0, targetPort: 80 }])), 'e62be9e');
    const deps = compose(inv, testConfig(PE_CONFIG)).dependencies;
    for (const name of ['inst.one', 'inst.two']) expect([...deps].find(([k]) => k.endsWith(name))?.[1]).toContain(PUBLIC_EXPOSURE_KEY);
    const asking = { metadata: { name: 'x', namespace: 'n' }, spec: { publicExposure: { ports: [{ name: 'a', port: 0, targetPort: 1 }] } } };
    expect(lookupKeysOf('Instance', asking)).toContain(PUBLIC_EXPOSURE_KEY);
    expect(lookupKeysOf('Instance', { metadata: { name: 'x', namespace: 'n' }, spec: {}, status: { publicExposure: { phase: 'Ready' } } })).toContain(PUBLIC_EXPOSURE_KEY);
    expect(lookupKeysOf('Template', { metadata: { name: 't', namespace: 'n' }, spec: { allowPublicExposure: true } })).toContain(PUBLIC_EXPOSURE_KEY);
    expect(lookupKeysOf('Instance', { metadata: { name: 'x', namespace: 'n' }, spec: {} })).not.toContain(PUBLIC_EXPOSURE_KEY);
  });
});

describe('the platform ConfigMap', () => {
  it('leaves the public-exposure keys out at their defaults and carries them when set', () => {
    const cm = (cfg: Record<string, unknown>) => (renderPlatform(testConfig(cfg)) as Any[]).find((o) => o.kind === 'ConfigMap' && Object.values(o.data ?? {}).some((v) => String(v).includes('exposition')));
    const plain = JSON.stringify(cm({}));
    expect(plain).not.toContain('publicExposure');
    expect(JSON.stringify(cm(PE_CONFIG))).toContain('172.18.0.240-172.18.0.241');
  });
});

function composerAnnotationsOf(o: Any): Record<string, string> {
  return Object.fromEntries(Object.entries(o.metadata.annotations as Record<string, string>).filter(([k]) => !k.startsWith('metallb.')));
}
