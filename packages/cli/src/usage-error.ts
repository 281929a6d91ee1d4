/** A mistake on the command line: reported as one line on stderr, exit code 2, before any request. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
