// The test cluster's gateway peer: kwok's Stage (scripts/test-cluster.d/kwok/stages/gateway.yaml)
// writes an HTTPRoute's status as Envoy Gateway's controller would, after
// TEST_CLUSTER_ROUTE_ACCEPT_MS (default 1.5 s), and again for a new generation; and the vendored
// Envoy Gateway SecurityPolicy CRD takes the OIDC shape the product renders.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, apiError, createNamespace, createObject, deleteNamespace, deleteObject, dryRunCreate, getObject, rest, serverSideApply, uniqueName, waitFor, type KubeObject } from './cluster.ts';

const GW = 'gateway.networking.k8s.io/v1';
const CONTROLLER = 'gateway.envoyproxy.io/gatewayclass-controller';
/** The "not yet" checks need the Stage's delay to outlast a request (scripts/test-cluster's default: 1500). */
const slowStage = Number(process.env.TEST_CLUSTER_ROUTE_ACCEPT_MS ?? 1500) >= 500;

interface Condition { type: string; status: string; reason: string; message: string; observedGeneration: number; lastTransitionTime: string }
interface RouteParentStatus { parentRef: Record<string, unknown>; controllerName: string; conditions: Condition[] }
interface Route extends KubeObject { status?: { parents?: RouteParentStatus[] } }

/** Every parent has Accepted=True and ResolvedRefs=True observed at the route's generation. */
const acceptedAt = (route: Route | undefined, generation: number) =>
  !!route?.status?.parents?.length &&
  route.status.parents.every((p) =>
    ['Accepted', 'ResolvedRefs'].every((t) => p.conditions.some((c) => c.type === t && c.status === 'True' && c.observedGeneration === generation)),
  );

describe("kwok's gateway Stage accepts HTTPRoutes", () => {
  const gatewayClass = uniqueName('eg');
  let gwNs = '';
  let routeNs = '';
  beforeAll(async () => {
    gwNs = await createNamespace('gw');
    routeNs = await createNamespace('route');
    await createObject({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: gatewayClass }, spec: { controllerName: CONTROLLER } });
    for (const ns of [gwNs, routeNs]) {
      await createObject({
        apiVersion: GW,
        kind: 'Gateway',
        metadata: { name: 'eg', namespace: ns },
        spec: { gatewayClassName: gatewayClass, listeners: [{ name: 'http', protocol: 'HTTP', port: 80, allowedRoutes: { namespaces: { from: 'All' } } }] },
      });
    }
  });
  afterAll(async () => {
    await deleteObject({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: gatewayClass } });
    for (const ns of [gwNs, routeNs]) if (ns) await deleteNamespace(ns);
  });

  it('writes one parent status per parentRef after the delay, and follows a new generation', async () => {
    const ref = { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'env', namespace: routeNs } };
    // One parent in another namespace, one in the route's own (namespace omitted, as often rendered).
    const parentRefs = [{ name: 'eg', namespace: gwNs, sectionName: 'http' }, { name: 'eg' }];
    const created = await createObject<Route>({
      ...ref,
      spec: {
        parentRefs,
        hostnames: ['lab.example.com'],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/env' } }], backendRefs: [{ name: 'env', port: 6080 }] }],
      },
    });
    expect(created.metadata.generation).toBe(1);
    if (slowStage) expect((await getObject<Route>(ref))?.status?.parents ?? [], 'not accepted right after creation').toEqual([]);

    const accepted = await waitFor(async () => {
      const r = await getObject<Route>(ref);
      return acceptedAt(r, 1) && r;
    }, { timeoutMs: 20_000, message: 'the route to be accepted' });
    // The CRD defaults group and kind in the spec; the status copies each parentRef as stored.
    const storedRefs = (accepted.spec as { parentRefs: unknown[] }).parentRefs;
    expect(storedRefs).toEqual(parentRefs.map((p) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', ...p })));
    expect(accepted.status!.parents).toHaveLength(2);
    accepted.status!.parents!.forEach((p, i) => {
      expect(p.parentRef).toEqual(storedRefs[i]);
      expect(p.controllerName).toBe(CONTROLLER);
      expect(p.conditions).toEqual([
        { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'Route is accepted', observedGeneration: 1, lastTransitionTime: expect.any(String) },
        { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'Resolved all the Object references for the Route', observedGeneration: 1, lastTransitionTime: expect.any(String) },
      ]);
    });
    const times = accepted.status!.parents!.map((p) => p.conditions.map((c) => c.lastTransitionTime));

    // A spec change: generation 2, still observed at 1 until the Stage plays again.
    const c = rest();
    const edited = await c.request<Route>('PATCH', await c.resourcePath(GW, 'HTTPRoute', routeNs, 'env'), {
      body: { spec: { hostnames: ['lab.example.com', 'lab2.example.com'] } },
      contentType: 'application/merge-patch+json',
    });
    expect(edited.metadata.generation).toBe(2);
    if (slowStage) expect(acceptedAt(edited, 1), 'still observed at generation 1 right after the edit').toBe(true);
    const reaccepted = await waitFor(async () => {
      const r = await getObject<Route>(ref);
      return acceptedAt(r, 2) && r;
    }, { timeoutMs: 20_000, message: 'the new generation to be accepted' });
    expect(reaccepted.status!.parents).toHaveLength(2);
    // Still True: the conditions keep their transition times.
    expect(reaccepted.status!.parents!.map((p) => p.conditions.map((c) => c.lastTransitionTime))).toEqual(times);
  });

  it('takes the SecurityPolicy the product renders: OIDC in front of an HTTPRoute', async () => {
    const policy = {
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'SecurityPolicy',
      metadata: { name: 'env-oidc', namespace: routeNs },
      spec: {
        targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'env' }],
        oidc: {
          provider: { issuer: 'https://auth.example.com/realms/crownlabs' },
          clientID: 'crownlabs-env',
          clientSecret: { name: 'env-oidc-client' },
          redirectURL: 'https://lab.example.com/env/oauth2/callback',
          logoutPath: '/env/logout',
        },
      },
    };
    // Strict field validation: every field is in the CRD's schema.
    await dryRunCreate(policy);
    const [stored] = await serverSideApply(policy);
    expect(stored.spec).toMatchObject(policy.spec);
    expect((stored.spec as any).oidc.clientSecret).toEqual({ group: '', kind: 'Secret', name: 'env-oidc-client' });

    // The same check refuses a misspelt field and, by the CRD's CEL rules, a target kind it does not take.
    const typo = structuredClone(policy) as any;
    typo.spec.oidc.clientId = typo.spec.oidc.clientID;
    delete typo.spec.oidc.clientID;
    const e1 = await apiError(dryRunCreate(typo));
    expect(e1).toBeInstanceOf(ApiError);
    expect(String(e1.body?.message)).toMatch(/clientId/);
    const service = structuredClone(policy) as any;
    service.spec.targetRefs[0] = { group: '', kind: 'Service', name: 'env' };
    const e2 = await apiError(dryRunCreate(service));
    expect(e2.code).toBe(422);
    expect(String(e2.body?.message)).toMatch(/targetRefs\[\*\]\.group of gateway\.networking\.k8s\.io/);
  });
});
