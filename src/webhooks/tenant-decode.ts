/**
 * Reading a Tenant out of an admission request: what upstream's typed decode checks (a JSON object
 * whose labels, workspaces, publicKeys and lastLogin have the right types, and that is a Tenant).
 * The API server has already applied the CRD schema, so a failure here means a malformed
 * request, answered with 400.
 */
import type { Tenant, TenantWorkspaceEntry } from '../inputs/types.ts';
import { isObject, type AdmissionRequest } from './admission.ts';

export type DecodeResult = { tenant: Tenant } | { error: string };

export function decodeTenant(raw: unknown, what = 'object'): DecodeResult {
  if (raw === undefined || raw === null) return { error: `${what} is empty` };
  if (!isObject(raw)) return { error: `${what} is not a JSON object` };
  // The API server always sets both; a value other than a Tenant's means the wrong object.
  if ((raw.kind !== undefined && raw.kind !== 'Tenant') || (raw.apiVersion !== undefined && (typeof raw.apiVersion !== 'string' || !raw.apiVersion.startsWith('crownlabs.polito.it/')))) {
    return { error: `${what} is ${String(raw.apiVersion).slice(0, 64)} ${String(raw.kind).slice(0, 64)}, not a crownlabs.polito.it Tenant` };
  }
  const metadata = raw.metadata;
  if (!isObject(metadata)) return { error: `${what}.metadata is not an object` };
  if (metadata.name !== undefined && typeof metadata.name !== 'string') return { error: `${what}.metadata.name is not a string` };
  const labels = metadata.labels ?? {};
  if (!isObject(labels) || Object.values(labels).some((v) => typeof v !== 'string')) {
    return { error: `${what}.metadata.labels is not a map of strings` };
  }
  const spec = raw.spec ?? {};
  if (!isObject(spec)) return { error: `${what}.spec is not an object` };
  const ws = spec.workspaces;
  if (ws !== undefined && ws !== null) {
    if (!Array.isArray(ws)) return { error: `${what}.spec.workspaces is not a list` };
    for (const [i, e] of ws.entries()) {
      if (!isObject(e) || typeof e.name !== 'string' || (e.role !== undefined && typeof e.role !== 'string')) {
        return { error: `${what}.spec.workspaces[${i}] is not a {name, role} entry` };
      }
    }
  }
  const keys = spec.publicKeys;
  if (keys !== undefined && keys !== null && (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string'))) {
    return { error: `${what}.spec.publicKeys is not a list of strings` };
  }
  if (spec.lastLogin !== undefined && spec.lastLogin !== null && typeof spec.lastLogin !== 'string') {
    return { error: `${what}.spec.lastLogin is not a date-time string` };
  }
  return { tenant: raw as unknown as Tenant };
}

/** The empty Tenant upstream compares against when a CREATE has no old object. */
export function emptyTenant(): Tenant {
  return { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: '' }, spec: {} as Tenant['spec'] };
}

/** workspace name → role. */
export function workspaceRoles(tenant: Tenant): Map<string, string> {
  return new Map((tenant.spec?.workspaces ?? []).map((w: TenantWorkspaceEntry) => [w.name, w.role]));
}

/** The Tenant a request is about: `request.name`, else the object's own name. */
export function tenantName(request: AdmissionRequest): string {
  if (request.name) return request.name;
  const meta = (request.object as { metadata?: { name?: unknown } } | undefined)?.metadata;
  return typeof meta?.name === 'string' ? meta.name : '';
}
