/**
 * A reconcile failure a retry cannot fix (e.g. the object failed validation), as controller-runtime's
 * `reconcile.TerminalError`: the work queue does not retry the key; the next watch event on the
 * object (a spec change) enqueues it again as usual.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export function isTerminal(err: unknown): err is TerminalError {
  return err instanceof TerminalError;
}
