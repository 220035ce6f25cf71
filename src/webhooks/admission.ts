/**
 * The admission.k8s.io/v1 wire types the Tenant webhooks read and answer, and the response shapes
 * controller-runtime's admission helpers produce (Allowed, Denied, Errored, PatchResponseFromRaw),
 * so the API server relays the same codes and messages as upstream's webhooks.
 */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

export interface AdmissionRequest {
  uid: string;
  kind?: { group: string; version: string; kind: string };
  resource?: { group: string; version: string; resource: string };
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionStatus {
  code: number;
  reason?: string;
  message?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patchType?: 'JSONPatch';
  /** base64 of a JSON Patch (RFC 6902) array. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** Who skips the Tenant webhooks' checks (docs/behaviour.md §6). */
export interface BypassRule {
  /** `--webhook-bypass-groups` */
  bypassGroups: readonly string[];
  /** Users who skip them too: the controller's own identity, so that it can write its Tenants. */
  bypassUsers?: readonly string[];
}

/** A request is a bypass when it comes from a bypass user or any of the requester's groups is a bypass group. */
export function isBypass(request: AdmissionRequest, rule: BypassRule): boolean {
  const username = request.userInfo?.username;
  if (username && rule.bypassUsers?.includes(username)) return true;
  return (request.userInfo?.groups ?? []).some((g) => rule.bypassGroups.includes(g));
}

export function allowed(uid: string, warnings: string[] = []): AdmissionResponse {
  return { uid, allowed: true, status: { code: 200 }, ...(warnings.length ? { warnings } : {}) };
}

/** A denial: the API server answers the client 403 "admission webhook … denied the request: <message>". */
export function denied(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code: 403, reason: 'Forbidden', message } };
}

/**
 * An error answer (e.g. 400 when the request cannot be judged): relayed with that code, and the
 * reason when given (a Kubernetes status reason, e.g. `InternalError`, as upstream's API errors carry).
 */
export function errored(uid: string, code: number, message: string, reason?: string): AdmissionResponse {
  return { uid, allowed: false, status: { code, ...(reason ? { reason } : {}), message } };
}

/** Wraps a response into the AdmissionReview the API server expects back. */
export function review(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/**
 * Bounds on what a request may hold, far above anything the API server sends (uids are UUIDs,
 * names at most 253 characters, Tenants a few levels deep), so that a hand-made request cannot
 * blow up the decision (deep recursion) or the log and the answer (huge strings).
 */
export const REVIEW_LIMITS = { uid: 128, name: 253, string: 4096, groups: 1024, depth: 64 } as const;

/**
 * Where a JSON value nests deeper than `max` (iterative: the value may be deeper than the stack):
 * the path of the first such node, its first segments only, or undefined.
 */
function tooDeepAt(value: unknown, max: number): string | undefined {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [v, d, at] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d >= max) return at;
    const segment = (k: string | number) => (d < 6 ? (typeof k === 'number' ? `${at}[${k}]` : `${at}.${k}`) : d === 6 ? `${at}…` : at);
    if (Array.isArray(v)) v.forEach((child, i) => stack.push([child, d + 1, segment(i)]));
    else for (const [k, child] of Object.entries(v)) stack.push([child, d + 1, segment(k)]);
  }
  return undefined;
}

const isShortString = (v: unknown, max: number = REVIEW_LIMITS.string): v is string => typeof v === 'string' && v.length <= max;

function userInfoProblem(u: unknown): string | undefined {
  if (u === undefined) return undefined;
  if (!isObject(u)) return 'request.userInfo is not an object';
  for (const f of ['username', 'uid'] as const) {
    if (u[f] !== undefined && !isShortString(u[f])) return `request.userInfo.${f} is not a string of at most ${REVIEW_LIMITS.string} characters`;
  }
  const groups = u.groups;
  if (groups !== undefined && (!Array.isArray(groups) || groups.length > REVIEW_LIMITS.groups || !groups.every((g) => isShortString(g)))) {
    return `request.userInfo.groups is not a list of at most ${REVIEW_LIMITS.groups} strings`;
  }
  const extra = u.extra;
  if (extra !== undefined && (!isObject(extra) || !Object.values(extra).every((v) => Array.isArray(v) && v.every((x) => isShortString(x))))) {
    return 'request.userInfo.extra is not a map of string lists';
  }
  return undefined;
}

function requestProblem(r: Record<string, unknown>, expectedKind: string): string | undefined {
  if (typeof r.operation !== 'string' || !OPERATIONS.includes(r.operation as Operation)) return `request.operation is not one of ${OPERATIONS.join(', ')}`;
  for (const f of ['name', 'namespace'] as const) {
    if (r[f] !== undefined && !isShortString(r[f], REVIEW_LIMITS.name)) return `request.${f} is not a string of at most ${REVIEW_LIMITS.name} characters`;
  }
  for (const f of ['kind', 'resource'] as const) {
    const v = r[f];
    if (v !== undefined && (!isObject(v) || !Object.values(v).every((x) => isShortString(x, REVIEW_LIMITS.name)))) return `request.${f} is not a group/version/${f} of strings`;
  }
  const kind = r.kind as { group?: string; kind?: string } | undefined;
  if (kind && (kind.group !== 'crownlabs.polito.it' || kind.kind !== expectedKind)) return `request.kind is ${kind.group}/${kind.kind}, not a crownlabs.polito.it ${expectedKind}`;
  const userInfo = userInfoProblem(r.userInfo);
  if (userInfo) return userInfo;
  if (r.dryRun !== undefined && typeof r.dryRun !== 'boolean') return 'request.dryRun is not a boolean';
  for (const f of ['object', 'oldObject'] as const) {
    const deep = tooDeepAt(r[f], REVIEW_LIMITS.depth);
    if (deep !== undefined) return `request.${f}${deep} is nested deeper than ${REVIEW_LIMITS.depth} levels`;
  }
  return undefined;
}

/**
 * Checks the shape of a decoded AdmissionReview body; returns the request or a reason it is not
 * one. The API server always sends a well-formed v1 review; anything else is a caller's mistake.
 * With `uid` the review was readable enough to be answered (a 400 AdmissionReview response, which
 * the API server relays to its client); without, only an HTTP 400 fits.
 */
export function parseReview(body: unknown, expectedKind = 'Tenant'): { request: AdmissionRequest } | { error: string; uid?: string } {
  if (!isObject(body)) return { error: 'body is not a JSON object' };
  if (body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview') {
    return { error: `expected an admission.k8s.io/v1 AdmissionReview, got ${String(body.apiVersion).slice(0, 64)} ${String(body.kind).slice(0, 64)}` };
  }
  const r = body.request;
  if (!isObject(r)) return { error: 'AdmissionReview has no request' };
  if (typeof r.uid !== 'string' || !r.uid) return { error: 'request.uid is missing' };
  if (r.uid.length > REVIEW_LIMITS.uid) return { error: `request.uid is longer than ${REVIEW_LIMITS.uid} characters` };
  const problem = requestProblem(r, expectedKind);
  if (problem) return { error: problem, uid: r.uid };
  return { request: { ...(r as unknown as AdmissionRequest), userInfo: (r.userInfo as UserInfo | undefined) ?? {} } };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
