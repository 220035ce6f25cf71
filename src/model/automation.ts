/**
 * Instance automation rules (docs/behaviour.md §8), pure: the Template `deleteAfter` lifespan and the expiry time
 * it gives, how a status-check answer is read, whether a terminated Instance needs its content
 * submitted, and the labels the termination/submission steps write. The clock is an input.
 */
import type { Environment, Instance, Template } from '../inputs/types.ts';
import { contentDestination } from './customization-urls.ts';
import { instanceObjectLabels, LABEL, type InstanceIdentity } from './labels.ts';

/** A Template lifespan: `never`, or a whole number of milliseconds. */
export type Lifespan = { never: true } | { never: false; ms: number };

/** An RFC 3339 time with whole seconds, as Go's metav1.Time writes it. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Parses a Template lifespan (`never`, `<n>m`, `<n>h`, `<n>d`, and at e62be9e `<n>s`; docs/behaviour.md §1.3,
 * §8.3, §16.3; each level's CRD pattern admits its own units). An empty or missing value is the CRD
 * default `never`. Anything else throws an error naming the value.
 */
export function parseLifespan(deleteAfter: string | undefined): Lifespan {
  const text = (deleteAfter ?? '').trim();
  if (text === '' || text === 'never') return { never: true };
  const m = /^([0-9]+)([smhd])$/.exec(text);
  if (!m) throw new Error(`invalid lifespan "${deleteAfter}": expected "never" or <n>s, <n>m, <n>h, <n>d`);
  return { never: false, ms: Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] };
}

/**
 * A Template's lifespan after creation, from whichever field it holds: `spec.deleteAfter` (2e8aeb9) or
 * `spec.cleanup.deleteAfterCreation` (e62be9e), with the field's name for messages.
 */
export function templateLifespan(template: Template): { field: string; value: string | undefined } {
  const cleanup = template.spec.cleanup;
  return cleanup ? { field: 'cleanup.deleteAfterCreation', value: cleanup.deleteAfterCreation } : { field: 'deleteAfter', value: template.spec.deleteAfter };
}

/** When an Instance created at `creationTimestamp` expires (epoch ms), or undefined for `never`. */
export function expiryTime(creationTimestamp: string | undefined, lifespan: Lifespan): number | undefined {
  if (lifespan.never) return undefined;
  const created = Date.parse(creationTimestamp ?? '');
  if (!Number.isFinite(created)) throw new Error(`invalid creationTimestamp "${creationTimestamp}"`);
  return created + lifespan.ms;
}

/** The JSON a status-check URL answers (docs/behaviour.md §8.1). */
export interface StatusCheckResponse {
  error?: string;
  deadline?: string;
  idnumber?: string;
}

export type StatusCheckOutcome =
  /** 200: not over yet; record the deadline and check again after the interval. */
  | { action: 'requeue'; terminationTime?: string; response: StatusCheckResponse }
  /** 404: the exam/exercise is over; terminate now. */
  | { action: 'terminate'; terminationTime: string }
  | { action: 'error'; message: string };

/**
 * Reads a status-check answer (docs/behaviour.md §8.1): a 404 terminates whatever the body; otherwise the body
 * must be a JSON object, then a 200 records `deadline` as the termination time and any other code
 * is the error `unexpected status code <n>`.
 */
export function interpretStatusCheck(statusCode: number, body: string, now: number): StatusCheckOutcome {
  if (statusCode === 404) return { action: 'terminate', terminationTime: rfc3339(now) };
  let response: StatusCheckResponse;
  try {
    response = parseStatusCheckBody(body);
  } catch (e) {
    return { action: 'error', message: `status check answered ${statusCode} with an invalid body: ${(e as Error).message}` };
  }
  if (statusCode !== 200) return { action: 'error', message: `unexpected status code ${statusCode}` };
  return { action: 'requeue', terminationTime: response.deadline ? rfc3339(Date.parse(response.deadline)) : undefined, response };
}

function parseStatusCheckBody(body: string): StatusCheckResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    // Not the parser's message: it quotes the body, and the URL may be an internal one the tenant cannot read.
    throw new Error('not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
  const o = parsed as Record<string, unknown>;
  for (const k of ['error', 'deadline', 'idnumber'] as const) {
    if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'string') throw new Error(`"${k}" is not a string`);
  }
  if (typeof o.deadline === 'string' && o.deadline !== '' && !Number.isFinite(Date.parse(o.deadline))) throw new Error(`"deadline" is not an RFC 3339 time: ${JSON.stringify(o.deadline.slice(0, 40))}`);
  const out: StatusCheckResponse = {};
  if (typeof o.error === 'string') out.error = o.error;
  if (typeof o.deadline === 'string' && o.deadline !== '') out.deadline = o.deadline;
  if (typeof o.idnumber === 'string') out.idnumber = o.idnumber;
  return out;
}

/**
 * The single environment the automation steps act on (docs/behaviour.md §8.1/§8.2: a Template with exactly one
 * environment), or an error message.
 */
export function singleEnvironment(envs: readonly Environment[]): Environment | string {
  return envs.length === 1 ? envs[0] : `the Template has ${envs.length} environments; instance automation needs exactly one`;
}

/** Whether a terminated Instance's content is uploaded (docs/behaviour.md §8.1). */
export function submissionRequired(instance: Instance, env: Environment): boolean {
  return !!contentDestination(instance, env.name) && env.persistent === true;
}

/** Labels written when an Instance is terminated (docs/behaviour.md §8.1), with `spec.running = false`. */
export function terminationLabels(submission: boolean): Record<string, string> {
  return { [LABEL.watchForInstanceTermination]: 'false', [LABEL.instanceSubmissionRequested]: String(submission) };
}

/** Labels written when a submission is impossible (no destination, not persistent; docs/behaviour.md §8.2). */
export const SUBMISSION_SKIPPED_LABELS: Readonly<Record<string, string>> = {
  [LABEL.instanceSubmissionRequested]: 'false',
  [LABEL.instanceSubmissionCompleted]: 'false',
};

/** Labels written once the submission Job succeeded (docs/behaviour.md §8.2). */
export const SUBMISSION_COMPLETED_LABELS: Readonly<Record<string, string>> = {
  [LABEL.instanceSubmissionRequested]: 'false',
  [LABEL.instanceSubmissionCompleted]: 'true',
};

/** Whether the termination controller watches this Instance (docs/behaviour.md §8.1). */
export function watchedForTermination(labels: Record<string, string> | undefined): boolean {
  return labels?.[LABEL.watchForInstanceTermination] === 'true';
}

/** Whether a submission is pending (docs/behaviour.md §8.2). */
export function submissionPending(labels: Record<string, string> | undefined): boolean {
  return labels?.[LABEL.instanceSubmissionRequested] === 'true' && labels?.[LABEL.instanceSubmissionCompleted] !== 'true';
}

/** Labels of the submitter Job: component `submitter` plus the instance object labels (docs/behaviour.md §0.5, §8.2). */
export function submitterJobLabels(id: InstanceIdentity): Record<string, string> {
  return { [LABEL.component]: 'submitter', ...instanceObjectLabels(id) };
}

/** A finished Job's success, and when (docs/behaviour.md §8.2: completionTime, or now when unset). */
export function submissionTime(job: { status?: { succeeded?: number; completionTime?: string } } | undefined, now: number): string | undefined {
  if (!job || !((job.status?.succeeded ?? 0) > 0)) return undefined;
  return job.status?.completionTime || rfc3339(now);
}

/** Namespaces carrying this label are left out of expiration (as upstream HEAD, docs/behaviour.md §15.3). */
export const EXPIRATION_IGNORE_LABEL = 'crownlabs.polito.it/expiration-ignore';
