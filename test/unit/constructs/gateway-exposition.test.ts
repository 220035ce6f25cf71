// Exposition through Gateway API (docs/behaviour.md §17): the HTTPRoutes per environment, in each
// mode, at both API levels, the Gateway's auth policy, and the pieces the controller decides with.
import { describe, expect, it } from 'vitest';
import type { ApiLevel } from '../../../src/inputs/api-level.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { httpRouteAccepted, ingressHeldForRoute } from '../../../src/model/exposition.ts';
import { renderPlatform } from '../../../src/platform/install.ts';
import { lab, render, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const UID = '00000000-0000-4000-8000-000000000001';
const GATEWAY = { exposition: 'gateway' as const, gatewayRef: 'gateways/crownlabs-main' };
const parentRefs = [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'gateways', name: 'crownlabs-main' }];
const STRIP = [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '' } } }];

function renderAt(level: ApiLevel, env: Record<string, unknown>, config: Record<string, unknown> = GATEWAY, instance: Record<string, unknown> = { running: true }) {
  const text = lab({ env, instance });
  const r = render(text, testConfig({ apiLevel: level, ...config }), { schemas: true });
  return { ...r, objects: r.objects as Any[] };
}

const kinds = (objects: Any[]) => objects.filter((o) => o.kind === 'HTTPRoute' || o.kind === 'Ingress').map((o) => `${o.kind}/${o.metadata.name}`).sort();

describe('HTTPRoutes carry the Ingress routes: same name, host, path and rewrite', () => {
  // [what, level, environment, route name, path prefix, prefix stripped]
  const cases: [string, ApiLevel, Record<string, unknown>, string, string, boolean][] = [
    ['2e8aeb9 VM GUI (noVNC under /vnc)', '2e8aeb9', { environmentType: 'VirtualMachine', guiEnabled: true }, 'inst-one-gui', `/instance/${UID}/vnc`, false],
    ['2e8aeb9 Container', '2e8aeb9', { environmentType: 'Container', guiEnabled: true }, 'inst-one-gui', `/instance/${UID}/app`, false],
    ['2e8aeb9 Standalone', '2e8aeb9', { environmentType: 'Standalone', guiEnabled: true }, 'inst-one-app', `/instance/${UID}/app`, false],
    ['2e8aeb9 Standalone with rewriteURL', '2e8aeb9', { environmentType: 'Standalone', guiEnabled: true, rewriteURL: true }, 'inst-one-app', `/instance/${UID}/app`, true],
    ['e62be9e VM GUI (served at its root)', 'e62be9e', { environmentType: 'VirtualMachine', guiEnabled: true }, 'inst-one-env0', `/instance/${UID}/env0`, true],
    ['e62be9e CloudVM GUI', 'e62be9e', { environmentType: 'CloudVM', guiEnabled: true, image: 'https://images.example/x.qcow2' }, 'inst-one-env0', `/instance/${UID}/env0`, true],
    ['e62be9e Container', 'e62be9e', { environmentType: 'Container', guiEnabled: true }, 'inst-one-env0', `/instance/${UID}/env0`, false],
    ['e62be9e Container with rewriteURL (the route rewrites, as upstream\'s)', 'e62be9e', { environmentType: 'Container', guiEnabled: true, rewriteURL: true }, 'inst-one-env0', `/instance/${UID}/env0`, true],
    ['e62be9e Standalone with rewriteURL', 'e62be9e', { environmentType: 'Standalone', guiEnabled: true, rewriteURL: true }, 'inst-one-env0', `/instance/${UID}/env0`, true],
  ];
  it.each(cases)('%s', (_what, level, env, name, prefix, strip) => {
    const both = renderAt(level, env, { ...GATEWAY, exposition: 'both' });
    expect(kinds(both.objects)).toEqual([`HTTPRoute/${name}`, `Ingress/${name}`]);
    const route = both.get('HTTPRoute', name) as Any;
    const ingress = both.get('Ingress', name) as Any;
    expect(route.metadata.namespace).toBe('tenant-john-doe');
    expect(route.metadata.labels).toEqual(ingress.metadata.labels);
    expect(route.spec).toEqual({
      parentRefs,
      hostnames: [ingress.spec.rules[0].host],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: prefix } }],
          ...(strip ? { filters: STRIP } : {}),
          backendRefs: [{ group: '', kind: 'Service', name: ingress.spec.rules[0].http.paths[0].backend.service.name, port: 6080 }],
          timeouts: { request: '3600s', backendRequest: '3600s' },
        },
      ],
    });
    // The Ingress's own path says the same: a regex path comes with a rewrite, or the route's prefix as is.
    const path = ingress.spec.rules[0].http.paths[0].path as string;
    const rewrite = ingress.metadata.annotations['nginx.ingress.kubernetes.io/rewrite-target'];
    if (rewrite || path !== prefix) expect(path.startsWith(prefix)).toBe(true);
    // Gateway mode: the route alone; the default (ingress): the Ingress alone, as before.
    expect(kinds(renderAt(level, env).objects)).toEqual([`HTTPRoute/${name}`]);
    expect(kinds(renderAt(level, env, {}).objects)).toEqual([`Ingress/${name}`]);
  });

  it('a GUI-less VM gets no route, a stopped Instance neither a route nor a Service', () => {
    for (const level of ['2e8aeb9', 'e62be9e'] as const) {
      const headless = renderAt(level, { environmentType: 'VirtualMachine', guiEnabled: false });
      expect(kinds(headless.objects)).toEqual([]);
      expect(headless.objects.some((o) => o.kind === 'Service')).toBe(true);
      const stopped = renderAt(level, { environmentType: 'Container', guiEnabled: true, persistent: true, resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '5Gi' } }, GATEWAY, { running: false });
      expect(stopped.objects.filter((o) => ['Service', 'HTTPRoute', 'Ingress'].includes(o.kind))).toEqual([]);
    }
  });

  it('an Exam Instance\'s route names the exam host', () => {
    const r = renderAt('2e8aeb9', { environmentType: 'VirtualMachine', guiEnabled: true, mode: 'Exam' });
    expect((r.get('HTTPRoute', 'inst-one-gui') as Any).spec.hostnames).toEqual(['exam.crownlabs.polito.it']);
  });

  it('per-instance auth: the GUI route goes through the oauth2-proxy, whose callback path has a route of its own', () => {
    for (const level of ['2e8aeb9', 'e62be9e'] as const) {
      const r = renderAt(level, { environmentType: 'VirtualMachine', guiEnabled: true }, { ...GATEWAY, authMode: 'per-instance' });
      const routes = r.objects.filter((o) => o.kind === 'HTTPRoute');
      expect(r.objects.filter((o) => o.kind === 'Ingress')).toEqual([]);
      const proxy = r.objects.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('oauth2-proxy'));
      expect(proxy).toBeDefined();
      const backends = routes.map((o) => o.spec.rules[0].backendRefs[0]);
      expect(backends).toEqual([
        { group: '', kind: 'Service', name: proxy.metadata.name, port: 4180 },
        { group: '', kind: 'Service', name: proxy.metadata.name, port: 4180 },
      ]);
      const base = level === 'e62be9e' ? `/instance/${UID}/env0` : `/instance/${UID}`;
      expect(routes.map((o) => o.spec.rules[0].matches[0].path.value).sort()).toEqual([level === 'e62be9e' ? base : `${base}/vnc`, `${base}/oauth2`].sort());
    }
  });
});

describe('configuration', () => {
  it('exposition gateway or both needs the Gateway the routes attach to', () => {
    for (const exposition of ['gateway', 'both']) {
      const { problems } = loadConfig({ flags: { exposition } });
      expect(problems).toEqual([expect.objectContaining({ severity: 'error', field: 'gatewayRef', message: expect.stringContaining('<namespace>/<name>') })]);
      expect(loadConfig({ flags: { exposition, gatewayRef: 'gateways/main' } }).problems).toEqual([]);
    }
    expect(loadConfig({ flags: { gatewayRef: 'no-namespace' } }).problems).toEqual([expect.objectContaining({ field: 'gatewayRef' })]);
  });
});

describe('the Gateway\'s OIDC policy (shared auth behind a Gateway)', () => {
  const policies = (overrides: Record<string, unknown>) => renderPlatform(testConfig({ platformWebhookCaBundle: '', ...overrides })).filter((o) => o.kind === 'SecurityPolicy') as Any[];
  it('is rendered beside the Gateway, targeting it, with the configured OIDC client', () => {
    expect(policies({ ...GATEWAY, oidcIssuerUrl: 'https://auth.example/realms/lab', oidcClientId: 'lab' })).toEqual([
      expect.objectContaining({
        apiVersion: 'gateway.envoyproxy.io/v1alpha1',
        metadata: expect.objectContaining({ name: 'crownlabs-instances-auth', namespace: 'gateways' }),
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'crownlabs-main' }],
          oidc: expect.objectContaining({ provider: { issuer: 'https://auth.example/realms/lab' }, clientID: 'lab', clientSecret: { name: 'crownlabs-gateway-oidc' } }),
        },
      }),
    ]);
  });
  it('is not rendered with Ingresses only, with per-instance auth, or when turned off', () => {
    expect(policies({})).toEqual([]);
    expect(policies({ ...GATEWAY, authMode: 'per-instance' })).toEqual([]);
    expect(policies({ ...GATEWAY, platformGatewayAuth: false })).toEqual([]);
    expect(policies({ ...GATEWAY, exposition: 'both' })).toHaveLength(1);
  });
});

describe('when an HTTPRoute serves, and when an Ingress waits for it', () => {
  const gw = { namespace: 'gateways', name: 'crownlabs-main' };
  const route = (generation: number, conditions: object[], parentRef: object = { name: 'crownlabs-main', namespace: 'gateways' }) => ({ metadata: { generation }, status: { parents: [{ parentRef, conditions }] } });
  const accepted = (status: string, observedGeneration: number) => ({ type: 'Accepted', status, observedGeneration });
  it('accepted: our Gateway says Accepted True for the route\'s current generation', () => {
    expect(httpRouteAccepted(route(1, [accepted('True', 1)]), gw)).toBe(true);
    expect(httpRouteAccepted(route(2, [accepted('True', 1)]), gw)).toBe(false);
    expect(httpRouteAccepted(route(1, [accepted('False', 1)]), gw)).toBe(false);
    expect(httpRouteAccepted(route(1, []), gw)).toBe(false);
    expect(httpRouteAccepted(route(1, [accepted('True', 1)], { name: 'other', namespace: 'gateways' }), gw)).toBe(false);
    expect(httpRouteAccepted({ metadata: { generation: 1 } }, gw)).toBe(false);
    expect(httpRouteAccepted(undefined, gw)).toBe(false);
  });
  it('an Ingress no longer rendered waits only for a rendered route of its name that is not accepted', () => {
    const ingress = { kind: 'Ingress', metadata: { name: 'a' } };
    const notYet = () => route(1, []);
    const done = () => route(1, [accepted('True', 1)]);
    expect(ingressHeldForRoute(ingress, new Set(['a']), gw, notYet)).toBe(true);
    expect(ingressHeldForRoute(ingress, new Set(['a']), gw, () => undefined)).toBe(true);
    expect(ingressHeldForRoute(ingress, new Set(['a']), gw, done)).toBe(false);
    // Stopped (no route rendered), or not an Ingress: pruned as any other object.
    expect(ingressHeldForRoute(ingress, new Set(), gw, notYet)).toBe(false);
    expect(ingressHeldForRoute({ kind: 'Service', metadata: { name: 'a' } }, new Set(['a']), gw, notYet)).toBe(false);
    expect(ingressHeldForRoute(ingress, new Set(['a']), undefined, notYet)).toBe(false);
  });
});
