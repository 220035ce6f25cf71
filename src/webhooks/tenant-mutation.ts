/**
 * The mutating Tenant webhook (`/mutate-v1alpha2-tenant`, docs/behaviour.md §6.1): keeps the target (operator
 * selector) label under the operator's control and enrols every Tenant in the base workspaces.
 * Pure: request + configuration in, AdmissionResponse out.
 */
import fastJsonPatch from 'fast-json-patch';
import type { LabelSelector } from '../config/config.ts';
import type { ApiLevel } from '../inputs/api-level.ts';
import { allowed, errored, isBypass, type AdmissionRequest, type AdmissionResponse, type BypassRule } from './admission.ts';
import { decodeTenant, tenantName } from './tenant-decode.ts';

/** The Tenant that must never carry the target label (upstream `SVCTenantName`). */
export const SERVICE_TENANT = 'service-tenant';

export const WARN_SERVICE_TENANT_LABEL = 'operator selector label must not be present on service tenant and has been removed';
export const WARN_LABEL_REVERTED = 'operator selector label change is prohibited and has been reverted';

export interface TenantWebhookConfig extends BypassRule {
  /** `--target-label` */
  targetLabel: LabelSelector;
  /** `--base-workspaces` */
  baseWorkspaces: readonly string[];
  /** The API level of the Tenants admitted (the controller's); default 2e8aeb9. Only validation differs (docs/behaviour.md §16.4). */
  level?: ApiLevel;
}

/**
 * Applies the docs/behaviour.md §6.1 label rule to `labels` in place; returns the warnings, or an error when the
 * old object (needed only for an UPDATE by a non-bypass user) cannot be read.
 */
function enforceTargetLabel(request: AdmissionRequest, labels: Record<string, string>, config: TenantWebhookConfig): string[] | { error: string } {
  const { key, value } = config.targetLabel;
  if (tenantName(request) === SERVICE_TENANT) {
    if (!labels[key]) return [];
    labels[key] = '';
    return [WARN_SERVICE_TENANT_LABEL];
  }
  if (labels[key] && isBypass(request, config)) return [];
  if (request.operation === 'CREATE') {
    labels[key] = value;
    return [];
  }
  const decodedOld = decodeTenant(request.oldObject, 'oldObject');
  if ('error' in decodedOld) return decodedOld;
  const old = decodedOld.tenant.metadata.labels ?? {};
  if ((labels[key] ?? '') === (old[key] ?? '')) return [];
  if (key in old) labels[key] = old[key];
  else delete labels[key];
  return [WARN_LABEL_REVERTED];
}

export function mutateTenant(request: AdmissionRequest, config: TenantWebhookConfig): AdmissionResponse {
  const decoded = decodeTenant(request.object);
  if ('error' in decoded) return errored(request.uid, 400, decoded.error);
  const mutated = structuredClone(decoded.tenant);
  const labels = { ...(mutated.metadata.labels ?? {}) };
  const warnings = enforceTargetLabel(request, labels, config);
  // An UPDATE without a readable old object is a malformed request (upstream answers 500).
  if (!Array.isArray(warnings)) return errored(request.uid, 400, warnings.error);
  // An absent label map stays absent when nothing was added (as Go's omitempty marshalling).
  if (mutated.metadata.labels || Object.keys(labels).length) mutated.metadata = { ...mutated.metadata, labels };
  const enrolled = new Set((mutated.spec?.workspaces ?? []).map((w) => w.name));
  for (const ws of config.baseWorkspaces) {
    if (enrolled.has(ws)) continue;
    mutated.spec = { ...mutated.spec, workspaces: [...(mutated.spec?.workspaces ?? []), { name: ws, role: 'user' }] };
    enrolled.add(ws);
  }

  const patch = fastJsonPatch.compare(request.object as object, mutated);
  const response = allowed(request.uid, warnings);
  if (patch.length === 0) return response;
  return { ...response, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
}
