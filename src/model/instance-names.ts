/**
 * Which Instance names can be rendered at all (docs/behaviour.md §1.4): the install's
 * InstanceAdmissionPolicy (constructs/platform/instance-admission-policy.ts) and the CLI refuse the
 * same names, with the same words.
 */
import type { Inventory } from '../inputs/inventory.ts';
import type { Problem } from '../inputs/problems.ts';
import { objectKey } from '../inputs/types.ts';
import { MYDRIVE_INFO_SECRET } from './mydrive.ts';
import { canon, instanceChildName, instanceIngressName, oauth2ProxyName, submitterJobName, TENANT_NAMESPACE_OBJECT_NAMES } from './naming.ts';

/** DNS-1123 labels (Service and container names) and label values are capped at 63 characters. */
const CAP = 63;

/**
 * What is derived from an Instance name `n` (one environment) and capped at 63: `n` itself as the
 * `crownlabs.polito.it/instance` label value; `canon(n)`, the Service, container and volume name;
 * `<canon(n)>-oauth2-proxy`, a Service and the `app.kubernetes.io/instance` label (authMode
 * per-instance); `<canon(n)>-submitter`, a Job, whose name the API server puts in a label.
 * Ingress names (`-gui`, `-app`) are subdomains of up to 253 and do not count.
 */
function cappedNames(n: string): string[] {
  const base = instanceChildName(n);
  return [n, base, oauth2ProxyName(base), submitterJobName(n)];
}

/**
 * The longest Instance name whose every derived name fits (50). One limit for every configuration:
 * a switch of `authMode` or a submission request must not make an existing Instance unrenderable.
 */
export const MAX_INSTANCE_NAME_LENGTH = CAP - Math.max(...cappedNames('x').map((n) => n.length - 1));

/** Names of every object a Tenant's set renders in its personal namespace (docs/behaviour.md §5.4). */
export const TENANT_NAMESPACE_NAMES: readonly string[] = [...Object.values(TENANT_NAMESPACE_OBJECT_NAMES), MYDRIVE_INFO_SECRET];

/** Suffixes an Instance's children add to `canon(name)` with one environment (docs/behaviour.md §0.2). */
const CHILD_SUFFIXES = ((base: string) =>
  [base, instanceIngressName(base, false), instanceIngressName(base, true), oauth2ProxyName(base), submitterJobName(base)].map((n) => n.slice(base.length)))('x');

/**
 * Canonical Instance names (`canon(name)`) refused because a child would take the name of an object
 * of the tenant's own set (an Instance `mydrive-info` or `mydrive.info` would hold the namespace's
 * `mydrive-info` Secret). Derived from the names, so a new tenant object is reserved with it.
 */
export const RESERVED_INSTANCE_NAMES: readonly string[] = [
  ...new Set(TENANT_NAMESPACE_NAMES.flatMap((taken) => CHILD_SUFFIXES.filter((s) => taken.endsWith(s) && taken.length > s.length).map((s) => taken.slice(0, taken.length - s.length)))),
].sort();

export const INSTANCE_NAME_MESSAGES = {
  tooLong: `an Instance name is at most ${MAX_INSTANCE_NAME_LENGTH} characters: names and label values derived from it (the Service "<name>-oauth2-proxy", the Job "<name>-submitter") are limited to ${CAP}`,
  reserved: `is reserved: one of the Instance's objects would take the name of an object of the tenant's namespace (${TENANT_NAMESPACE_NAMES.join(', ')})`,
} as const;

/** Why an Instance may not be named `name`, or nothing when it may. */
export function instanceNameProblem(name: string): string | undefined {
  if (name.length > MAX_INSTANCE_NAME_LENGTH) return `${INSTANCE_NAME_MESSAGES.tooLong} (this one has ${name.length})`;
  if (RESERVED_INSTANCE_NAMES.includes(canon(name))) return `${JSON.stringify(name)} ${INSTANCE_NAME_MESSAGES.reserved}`;
  return undefined;
}

/** The name problems of every Instance of the input, at its `metadata.name` (what the API server would refuse). */
export function instanceNameProblems(inventory: Inventory): Problem[] {
  const problems: Problem[] = [];
  for (const instance of inventory.instances.values()) {
    const message = instanceNameProblem(instance.metadata.name);
    if (!message) continue;
    const src = inventory.sourceOf(instance);
    problems.push({ severity: 'error', file: src?.file, document: src?.document, ...src?.locate?.('/metadata/name'), kind: 'Instance', name: objectKey(instance), field: 'metadata.name', message });
  }
  return problems;
}
