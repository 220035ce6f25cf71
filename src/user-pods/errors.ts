/** A request the API refuses: answered with `status` and `message`, nothing is created. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

export const badRequest = (message: string) => new RequestError(400, message);
