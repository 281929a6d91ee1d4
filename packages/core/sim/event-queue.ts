/** One pending event: runs at virtual time `at`; `seq` breaks ties in insertion order. */
export interface QueuedEvent {
  at: number;
  seq: number;
  run: () => void;
  /** Set by cancel(): the driver drops it without running a step. */
  cancelled: boolean;
}

/**
 * Binary min-heap of events ordered by (time, insertion sequence). Equal times run in the
 * order they were scheduled, which is what makes a run a pure function of its seed.
 */
export class EventQueue {
  private readonly heap: QueuedEvent[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, run: () => void): QueuedEvent {
    const event: QueuedEvent = { at, seq: this.seq++, run, cancelled: false };
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = event;
    return event;
  }

  peek(): QueuedEvent | undefined {
    return this.heap[0];
  }

  pop(): QueuedEvent | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, last)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}

function before(x: QueuedEvent, y: QueuedEvent): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}
