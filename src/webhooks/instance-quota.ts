/**
 * The validating Instance webhook of e62be9e (docs/behaviour.md §16.6): an Instance may be created,
 * or resumed (`running: false → true`), only when it fits its workspace's quota and the tenant's
 * managed quota, counting the Instances that run in its namespace and those admitted a moment ago
 * (./quota-ledger.ts). The sums and limits are src/model/instance-quota.ts.
 */
import { TEMPLATE_REF, TENANT_REF, type GenericRef, type Instance, type Template, type Tenant, type Workspace } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { decideQuota, PERSONAL_WORKSPACE, tenantLimit, templateUsage, workspaceLimit, workspaceOfTemplate, type QuotaInstance, type QuotaLimit, type Usage } from '../model/instance-quota.ts';
import { enrolledWorkspaces, splitWorkspaces, tenantQuota } from '../model/tenant-plan.ts';
import type { ApiAccess } from '../kube/resources.ts';
import { allowed, denied, errored, isBypass, isObject, type AdmissionRequest, type AdmissionResponse, type BypassRule } from './admission.ts';
import { stillPending, type LedgerEntry, type LedgerStore } from './quota-ledger.ts';

/** Cluster-wide, what ./quota-reads.ts reads. */
export const INSTANCE_QUOTA_API_ACCESS: readonly ApiAccess[] = [
  { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Template', verbs: ['get', 'list'] },
  { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', verbs: ['list'] },
  { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', verbs: ['get'] },
  { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', verbs: ['get'] },
];
/** In the ledger's namespace, what ./quota-ledger.ts writes (`create` cannot be limited by name). */
export const INSTANCE_QUOTA_LEDGER_ACCESS: readonly ApiAccess[] = [{ apiVersion: 'v1', kind: 'ConfigMap', verbs: ['get', 'create', 'update'] }];

/** What the check reads: live objects (undefined when not found), Instances by a consistent list. */
export interface QuotaReads {
  getTemplate(namespace: string, name: string): Promise<Template | undefined>;
  listTemplates(namespace: string): Promise<Template[]>;
  listInstances(namespace: string): Promise<Instance[]>;
  getWorkspace(name: string): Promise<Workspace | undefined>;
  getTenant(name: string): Promise<Tenant | undefined>;
}

export interface InstanceQuotaDeps extends BypassRule {
  reads: QuotaReads;
  ledger: LedgerStore;
  caps: Pick<ComposerConfig, 'capCpu' | 'capMemory' | 'capInstances'>;
  now: () => number;
  /** Serializes the judgements of one namespace in this process (requests to other replicas meet at the ledger). */
  lock: NamespaceLock;
}

/** Attempts before a request whose ledger keeps changing under it is answered with an error. */
const LEDGER_ATTEMPTS = 8;

/** One judgement per namespace at a time: the others wait their turn instead of losing the ledger write. */
export class NamespaceLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(namespace: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(namespace) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.tails.set(namespace, tail);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(namespace) === tail) this.tails.delete(namespace);
    }
  }
}

type DecodedInstance = { name: string; namespace: string; running: boolean; template: GenericRef; tenant: string; resourceVersion?: string };

function decodeInstance(raw: unknown, what: string, namespace: string | undefined): DecodedInstance | string {
  if (!isObject(raw)) return `${what} is not a JSON object`;
  const metadata = raw.metadata;
  const spec = raw.spec;
  if (!isObject(metadata) || typeof metadata.name !== 'string') return `${what}.metadata.name is not a string`;
  if (!isObject(spec)) return `${what}.spec is not an object`;
  const template = spec[TEMPLATE_REF];
  const tenant = spec[TENANT_REF];
  if (!isObject(template) || typeof template.name !== 'string' || (template.namespace !== undefined && typeof template.namespace !== 'string')) return `${what}.spec["${TEMPLATE_REF}"] is not a reference`;
  if (!isObject(tenant) || typeof tenant.name !== 'string') return `${what}.spec["${TENANT_REF}"] is not a reference`;
  const ns = typeof metadata.namespace === 'string' && metadata.namespace ? metadata.namespace : namespace;
  if (!ns) return `${what} has no namespace`;
  const resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
  return { name: metadata.name, namespace: ns, running: spec.running !== false, template: template as unknown as GenericRef, tenant: tenant.name, ...(resourceVersion ? { resourceVersion } : {}) };
}

/** The limits an Instance of `workspace` must fit, or why it cannot be judged. */
async function limitsOf(workspace: string, tenant: Tenant, deps: InstanceQuotaDeps): Promise<{ workspace: QuotaLimit; tenant: QuotaLimit } | string> {
  // One read per Workspace: the candidate's and the tenant's enrolments are usually the same ones.
  const names = new Set((tenant.spec.workspaces ?? []).map((w) => w.name));
  if (workspace !== PERSONAL_WORKSPACE) names.add(workspace);
  const found = new Map<string, Workspace>();
  await Promise.all(
    [...names].map(async (name) => {
      const ws = await deps.reads.getWorkspace(name);
      if (ws) found.set(name, ws);
    }),
  );
  let own: QuotaLimit;
  if (workspace === PERSONAL_WORKSPACE) {
    if (!tenant.spec.personalWorkspace) return `tenant ${tenant.metadata.name} has no personal workspace`;
    own = workspaceLimit(tenant.spec.personalWorkspace);
  } else {
    const ws = found.get(workspace);
    if (!ws) return `failed to get workspace ${workspace}: not found`;
    own = workspaceLimit(ws.spec.quota);
  }
  const enrolled = enrolledWorkspaces(splitWorkspaces(tenant, found).existing).map((e) => e.workspace);
  return { workspace: own, tenant: tenantLimit(tenantQuota(tenant, enrolled, deps.caps, 'e62be9e')) };
}

/** Judges the candidate against what runs and what is pending, and records it when it may run. */
async function judge(
  uid: string,
  candidate: DecodedInstance,
  usage: Usage,
  workspace: string,
  limits: { workspace: QuotaLimit; tenant: QuotaLimit },
  owner: Tenant,
  dryRun: boolean,
  /** A resume: the Instance's resourceVersion before it. */
  before: string | undefined,
  deps: InstanceQuotaDeps,
): Promise<AdmissionResponse> {
  const ns = candidate.namespace;
  for (let attempt = 0; attempt < LEDGER_ATTEMPTS; attempt++) {
    // The ledger first: an entry written after this read makes the write below fail.
    const ledger = await deps.ledger.read(ns);
    const instances = await deps.reads.listInstances(ns);
    const others: QuotaInstance[] = instances
      .filter((i) => i.metadata.name !== candidate.name)
      .map((i) => ({ name: i.metadata.name, running: i.spec?.running !== false, templateRef: i.spec?.[TEMPLATE_REF] ?? { name: '' } }));
    const listed = new Map(instances.map((i) => [i.metadata.name, { running: i.spec?.running !== false, resourceVersion: i.metadata.resourceVersion }]));
    const templates = new Map<string, Template>();
    const referenced = new Set(others.filter((o) => o.running).map((o) => o.templateRef.namespace ?? ns));
    for (const tns of referenced) for (const t of await deps.reads.listTemplates(tns)) templates.set(`${tns}/${t.metadata.name}`, t);
    const now = deps.now();
    // Entries already stored are counted by the list (or no longer run): the ledger keeps the others.
    const kept = stillPending(ledger.entries, listed, now);
    const pending = [...kept].filter(([name]) => name !== candidate.name).map(([, e]) => e);
    const decision = decideQuota({
      candidate: { name: candidate.name, running: true, templateRef: candidate.template },
      candidateUsage: usage,
      others,
      templateOf: (ref) => templates.get(`${ref.namespace ?? ns}/${ref.name}`),
      pending,
      namespace: ns,
      workspaceLimit: limits.workspace,
      tenant: { name: owner.metadata.name, limit: limits.tenant },
    });
    if (!decision.allowed) return { ...denied(uid, decision.message), ...(decision.warnings.length ? { warnings: decision.warnings } : {}) };
    // A stopped Instance takes nothing yet; a dry run must have no side effects.
    if (!candidate.running || dryRun) return allowed(uid, decision.warnings);
    kept.set(candidate.name, { workspace, usage, at: now, ...(before !== undefined ? { before } : {}) } satisfies LedgerEntry);
    if (await deps.ledger.write(ns, ledger, kept, { name: owner.metadata.name, uid: owner.metadata.uid ?? '' })) return allowed(uid, decision.warnings);
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
  }
  return errored(uid, 409, `the Instance quota of namespace ${ns} kept changing while this request was judged; try again`, 'Conflict');
}

/** The webhook's decision for one AdmissionRequest (CREATE or UPDATE of a v1alpha2 Instance). */
export async function validateInstanceQuota(request: AdmissionRequest, deps: InstanceQuotaDeps): Promise<AdmissionResponse> {
  const uid = request.uid;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed(uid);
  if (isBypass(request, deps)) return allowed(uid);
  const candidate = decodeInstance(request.object, 'object', request.namespace);
  if (typeof candidate === 'string') return errored(uid, 400, candidate);
  let before: string | undefined;
  if (request.operation === 'UPDATE') {
    const old = decodeInstance(request.oldObject, 'oldObject', request.namespace);
    if (typeof old === 'string') return errored(uid, 400, old);
    // Only a resume takes more of the quota.
    if (old.running || !candidate.running) return allowed(uid);
    before = old.resourceVersion ?? '';
  }
  const ns = candidate.namespace;
  const templateNs = candidate.template.namespace ?? ns;
  try {
    const template = await deps.reads.getTemplate(templateNs, candidate.template.name);
    if (!template) return denied(uid, `failed to get instance template ${templateNs}/${candidate.template.name}: not found`);
    const workspace = workspaceOfTemplate(candidate.template, ns);
    if (workspace === undefined) return denied(uid, `template ${templateNs}/${candidate.template.name} is neither in a workspace namespace nor in the tenant's own`);
    const owner = await deps.reads.getTenant(candidate.tenant);
    if (!owner) return denied(uid, `failed to get tenant ${candidate.tenant}: not found`);
    const limits = await limitsOf(workspace, owner, deps);
    if (typeof limits === 'string') return denied(uid, limits);
    const usage = templateUsage(template);
    return await deps.lock.run(ns, () => judge(uid, candidate, usage, workspace, limits, owner, request.dryRun === true, before, deps));
  } catch (e) {
    return errored(uid, 500, `failed to check the Instance quota: ${(e as Error).message}`, 'InternalError');
  }
}
