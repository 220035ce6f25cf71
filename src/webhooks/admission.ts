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

/** A request is a bypass when any of the requester's groups is one of the bypass groups (SPEC §6). */
export function isBypass(request: AdmissionRequest, bypassGroups: readonly string[]): boolean {
  return (request.userInfo?.groups ?? []).some((g) => bypassGroups.includes(g));
}

export function allowed(uid: string, warnings: string[] = []): AdmissionResponse {
  return { uid, allowed: true, status: { code: 200 }, ...(warnings.length ? { warnings } : {}) };
}

/** A denial: the API server answers the client 403 "admission webhook … denied the request: <message>". */
export function denied(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code: 403, reason: 'Forbidden', message } };
}

/** An error answer (e.g. 400 when the request cannot be judged): relayed with that code. */
export function errored(uid: string, code: number, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}

/** Wraps a response into the AdmissionReview the API server expects back. */
export function review(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/**
 * Checks the shape of a decoded AdmissionReview body; returns the request or a reason it is not one.
 * The API server always sends v1 with a request; anything else is a caller's mistake.
 */
export function parseReview(body: unknown): { request: AdmissionRequest } | { error: string } {
  if (!isObject(body)) return { error: 'body is not a JSON object' };
  if (body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview') {
    return { error: `expected an admission.k8s.io/v1 AdmissionReview, got ${String(body.apiVersion)} ${String(body.kind)}` };
  }
  const r = body.request;
  if (!isObject(r)) return { error: 'AdmissionReview has no request' };
  if (typeof r.uid !== 'string' || !r.uid) return { error: 'request.uid is missing' };
  if (typeof r.operation !== 'string') return { error: 'request.operation is missing' };
  if (r.userInfo !== undefined && !isObject(r.userInfo)) return { error: 'request.userInfo is not an object' };
  return { request: { ...(r as unknown as AdmissionRequest), userInfo: (r.userInfo as UserInfo | undefined) ?? {} } };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
