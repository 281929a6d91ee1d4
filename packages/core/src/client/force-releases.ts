/**
 * The forceReleases a client makes, key by key, and its requests that may win a key meanwhile
 * (claims, hand-overs, a resume's renewal). A forceRelease may land before or after such a
 * request, and neither answer says which: a lease won by a request whose way overlaps a
 * forceRelease of its key (sent before that was answered, answered after it began) may have
 * been freed by it, and another client may hold the key by now. Such a lease is given back,
 * never made a Lock: one rule for every way a won request becomes a Lock (KeyQueue.hold).
 */
export class ForceReleases {
  /** Only keys with a forceRelease or such a request on its way: an entry goes once both are done. */
  private readonly keys = new Map<string, KeyState>();

  /** A forceRelease of `key` begins; call the function returned once it is answered (or failed). */
  begin(key: string): () => void {
    const state = this.enter(key);
    state.forcing++;
    state.epoch++;
    return () => {
      state.forcing--;
      state.epoch++;
      this.leave(key, state);
    };
  }

  /** A forceRelease of `key` by this client is on its way. */
  forcing(key: string): boolean {
    return (this.keys.get(key)?.forcing ?? 0) > 0;
  }

  /**
   * Sends `request`, which may win `key`. `forced`: a forceRelease of the key overlapped it, so
   * what it won may have been freed (whatever the request's own answer says).
   */
  async send<R>(key: string, request: () => Promise<R>): Promise<{ value: R; forced: boolean }> {
    const state = this.enter(key);
    state.requests++;
    const epoch = state.epoch;
    try {
      const value = await request();
      return { value, forced: state.forcing > 0 || state.epoch !== epoch };
    } finally {
      state.requests--;
      this.leave(key, state);
    }
  }

  private enter(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { forcing: 0, requests: 0, epoch: 0 };
      this.keys.set(key, state);
    }
    return state;
  }

  private leave(key: string, state: KeyState): void {
    if (state.forcing === 0 && state.requests === 0 && this.keys.get(key) === state) this.keys.delete(key);
  }
}

interface KeyState {
  /** forceReleases of the key on their way. */
  forcing: number;
  /** Requests that may win the key, on their way. */
  requests: number;
  /** Counts every start and end of a forceRelease of the key while the entry lives. */
  epoch: number;
}
