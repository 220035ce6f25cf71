import type { CachedObject } from '../kube/informer.ts';
import type { Caches } from './caches.ts';

/**
 * A reconcile failure a retry cannot fix (e.g. the object failed validation), as controller-runtime's
 * `reconcile.TerminalError`: the work queue does not retry the key; the next watch event on the
 * object (a spec change) enqueues it again as usual.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  constructor(
    message: string,
    /** A Warning Event to record on this object: the failure is visible where users look. */
    readonly event?: { object: CachedObject; reason: string },
  ) {
    super(message);
  }
}

/** An object that failed validation: a terminal error naming the problems, with an `InvalidObject` Event. */
export function failedValidation(caches: Caches, live: CachedObject): TerminalError {
  const id = `${live.kind} ${live.metadata.namespace ? `${live.metadata.namespace}/` : ''}${live.metadata.name}`;
  const why = caches.whyInvalid(live);
  return new TerminalError(`${id} failed validation${why ? `: ${why}` : ''}`, { object: live, reason: 'InvalidObject' });
}

export function isTerminal(err: unknown): err is TerminalError {
  return err instanceof TerminalError;
}
