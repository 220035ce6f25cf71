/**
 * How running environments are reached from a browser (docs/behaviour.md §7.3, §17): through an
 * Ingress, a Gateway API HTTPRoute, or both while a cluster moves from one to the other. The one
 * place that knows what each mode renders, and when an HTTPRoute serves.
 */
import type { EXPOSITION_MODES } from '../config/keys.ts';

export type ExpositionMode = (typeof EXPOSITION_MODES)[number];

export interface Exposure {
  ingress: boolean;
  httpRoute: boolean;
}

const EXPOSURE: Readonly<Record<ExpositionMode, Exposure>> = {
  ingress: { ingress: true, httpRoute: false },
  gateway: { ingress: false, httpRoute: true },
  both: { ingress: true, httpRoute: true },
};

export function exposure(mode: ExpositionMode): Exposure {
  return EXPOSURE[mode];
}

export interface GatewayRef {
  namespace: string;
  name: string;
}

/** `<namespace>/<name>` (the config check guarantees the shape); empty: none. */
export function parseGatewayRef(ref: string): GatewayRef | undefined {
  const [namespace, name] = ref.split('/');
  return namespace && name ? { namespace, name } : undefined;
}

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const HTTP_ROUTE_API_VERSION = `${GATEWAY_GROUP}/v1`;

interface RouteCondition {
  type?: string;
  status?: string;
  observedGeneration?: number;
}

export interface RouteState {
  metadata?: { generation?: number };
  status?: { parents?: { parentRef?: { name?: string; namespace?: string }; conditions?: RouteCondition[] }[] };
}

/**
 * The route is served: the Gateway it names reports `Accepted: True` for the route's current
 * generation (a condition about an older spec says nothing about this one). A route whose
 * parentRef has no namespace is in its own: ours always name one.
 */
export function httpRouteAccepted(route: RouteState | undefined, gateway: GatewayRef): boolean {
  const generation = route?.metadata?.generation;
  for (const parent of route?.status?.parents ?? []) {
    if (parent.parentRef?.name !== gateway.name || parent.parentRef.namespace !== gateway.namespace) continue;
    const accepted = (parent.conditions ?? []).find((c) => c.type === 'Accepted');
    if (!accepted || accepted.status !== 'True') return false;
    return generation === undefined || accepted.observedGeneration === undefined || accepted.observedGeneration === generation;
  }
  return false;
}

/**
 * Whether an Ingress no longer rendered stays for now: the set renders an HTTPRoute of the same
 * name that the Gateway has not accepted yet, so pruning the Ingress would leave the environment
 * without a route (upstream removes the Ingress only once the route is accepted). `route` gives
 * the live HTTPRoute of a name.
 */
export function ingressHeldForRoute(
  child: { kind: string; metadata: { name: string } },
  renderedRoutes: ReadonlySet<string>,
  gateway: GatewayRef | undefined,
  route: (name: string) => RouteState | undefined,
): boolean {
  if (child.kind !== 'Ingress' || !gateway || !renderedRoutes.has(child.metadata.name)) return false;
  return !httpRouteAccepted(route(child.metadata.name), gateway);
}

/** `ingressHeldForRoute` over the HTTPRoutes of one rendered set (the controller's prune and `crownlabs diff`). */
export function heldIngresses(
  rendered: readonly { kind: string; metadata: { name: string } }[],
  gateway: GatewayRef | undefined,
): (child: { kind: string; metadata: { name: string } }, route: (name: string) => RouteState | undefined) => boolean {
  const routes = new Set(rendered.filter((o) => o.kind === 'HTTPRoute').map((o) => o.metadata.name));
  return (child, route) => ingressHeldForRoute(child, routes, gateway, route);
}
