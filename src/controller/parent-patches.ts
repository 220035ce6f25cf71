/**
 * The merge patches the reconcilers write on the parents themselves (not their status, not their
 * children): an Instance's own labels, prettyName and frozen Template spec, a Tenant's own labels,
 * the finalizer of Tenants and Workspaces. Pure, so that `crownlabs diff` dry-runs the very patch
 * a reconcile would send. Each is undefined when there is nothing to write.
 */
import type { Instance, Template, Tenant, Workspace } from '../inputs/types.ts';
import type { ApiLevel } from '../inputs/api-level.ts';
import { LABEL } from '../model/labels.ts';
import type { ComposerConfig } from '../config/config.ts';
import { FROZEN_TEMPLATE_ANNOTATION, instanceOwnLabels } from '../model/instance-plan.ts';
import { tenantOwnLabels } from '../model/tenant-plan.ts';
import { TENANT_FINALIZER } from './context.ts';
import { prettyNameFor } from './pretty-name.ts';

export interface MetadataPatch {
  metadata?: Record<string, unknown>;
  spec?: Record<string, unknown>;
}

/**
 * The Instance's own labels, prettyName (from `uid`) and the Template spec it is created from.
 * Only the labels that differ are patched: a stale cached copy of other labels (e.g. the ones the
 * termination and submission steps flip) is never written back.
 */
export function instanceMetadataPatch(instance: Instance, template: Template, uid: string, level: ApiLevel): MetadataPatch | undefined {
  const labels = Object.fromEntries(Object.entries(instanceOwnLabels(instance, template, level)).filter(([k, v]) => instance.metadata.labels?.[k] !== v));
  const patch: MetadataPatch = {};
  if (Object.keys(labels).length > 0) patch.metadata = { labels };
  if (!instance.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION]) {
    patch.metadata = { ...patch.metadata, annotations: { [FROZEN_TEMPLATE_ANNOTATION]: JSON.stringify({ environmentList: template.spec.environmentList }) } };
  }
  if (!instance.spec.prettyName) patch.spec = { prettyName: prettyNameFor(uid) };
  return patch.metadata || patch.spec ? patch : undefined;
}

/** The Tenant's own labels (docs/behaviour.md §5.6): changed ones set, the ones it should not have removed. */
export function tenantLabelPatch(tenant: Tenant, current: Record<string, string> | undefined, workspaces: ReadonlyMap<string, Workspace>, config: Pick<ComposerConfig, 'baseWorkspaces'>): MetadataPatch | undefined {
  const labels = tenantOwnLabels(tenant, workspaces, config);
  const have = current ?? {};
  const patch: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(labels)) if (have[k] !== v) patch[k] = v;
  for (const k of Object.keys(have)) if (!(k in labels)) patch[k] = null;
  return Object.keys(patch).length ? { metadata: { labels: patch } } : undefined;
}

/** The label a Workspace carries for its autoEnroll, per level (docs/behaviour.md §16.4): none at 2e8aeb9. */
const AUTO_ENROLL_LABEL: Readonly<Record<ApiLevel, ((ws: Workspace) => string) | undefined>> = {
  '2e8aeb9': undefined,
  e62be9e: (ws) => ws.spec.autoEnroll || 'disabled',
};

/** The Workspace's `crownlabs.polito.it/autoenroll` label, when it differs. */
export function workspaceAutoEnrollPatch(workspace: Workspace, current: Record<string, string> | undefined, level: ApiLevel): MetadataPatch | undefined {
  const want = AUTO_ENROLL_LABEL[level]?.(workspace);
  if (want === undefined || current?.[LABEL.autoEnroll] === want) return undefined;
  return { metadata: { labels: { [LABEL.autoEnroll]: want } } };
}

/**
 * A Tenant labelled a candidate of a Workspace that no longer takes approvals (docs/behaviour.md
 * §16.4): its entry is removed, and made a `user` one when the Workspace enrols immediately. The
 * whole list is written (a merge patch replaces lists), guarded by the resourceVersion read.
 */
export function candidateEnrolmentPatch(
  tenant: Pick<Tenant, 'spec'> & { metadata: { labels?: Record<string, string>; resourceVersion?: string } },
  workspace: Workspace,
): MetadataPatch | undefined {
  const ws = workspace.metadata.name;
  const mode = workspace.spec.autoEnroll;
  if (mode === 'withApproval' || tenant.metadata.labels?.[`${LABEL.workspacePrefix}${ws}`] !== 'candidate') return undefined;
  const entries = tenant.spec.workspaces ?? [];
  const kept = entries.filter((e) => e.name !== ws);
  const workspaces = mode === 'immediate' ? [...kept, { name: ws, role: 'user' as const }] : kept;
  return { metadata: { resourceVersion: tenant.metadata.resourceVersion }, spec: { workspaces } };
}

/**
 * A deleted Workspace's entry removed from a Tenant enrolled in it (docs/behaviour.md §4.5): the
 * whole list written, guarded by the resourceVersion read; undefined when the Tenant has no entry.
 */
export function workspaceRemovalPatch(tenant: Pick<Tenant, 'spec'> & { metadata: { resourceVersion?: string } }, workspace: string): MetadataPatch | undefined {
  const entries = tenant.spec?.workspaces ?? [];
  if (!entries.some((e) => e.name === workspace)) return undefined;
  return { metadata: { resourceVersion: tenant.metadata.resourceVersion }, spec: { workspaces: entries.filter((e) => e.name !== workspace) } };
}

/** The tenant-operator finalizer added or removed (docs/behaviour.md §0.7), guarded by the resourceVersion read. */
export function finalizerPatch(obj: { metadata: { finalizers?: string[]; resourceVersion?: string } }, present: boolean, finalizer: string = TENANT_FINALIZER): MetadataPatch | undefined {
  const current = obj.metadata.finalizers ?? [];
  if (current.includes(finalizer) === present) return undefined;
  const finalizers = present ? [...current, finalizer] : current.filter((f) => f !== finalizer);
  return { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } };
}
