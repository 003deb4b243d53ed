/** Something that happens at a simulated time. */
export interface Timed {
  at: number;
}

interface Entry<T> {
  at: number;
  seq: number;
  event: T;
}

/**
 * A binary min-heap of future events. Events at the same time come out in the order they were
 * pushed (a sequence number breaks ties), which keeps runs deterministic.
 */
export class EventQueue<T extends Timed> {
  private readonly heap: Entry<T>[] = [];
  private seq = 0;

  /** Number of events waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Time of the next event, or Infinity when none is waiting. */
  peekTime(): number {
    return this.heap[0]?.at ?? Infinity;
  }

  /** Schedules an event. */
  push(event: T): void {
    const heap = this.heap;
    heap.push({ at: event.at, seq: this.seq++, event });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Takes the earliest event, or undefined when none is waiting. */
  pop(): T | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (!top) return undefined;
    const last = heap.pop() as Entry<T>;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && this.less(l, m)) m = l;
        if (r < heap.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top.event;
  }

  private less(i: number, j: number): boolean {
    const a = this.heap[i] as Entry<T>;
    const b = this.heap[j] as Entry<T>;
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const tmp = this.heap[i] as Entry<T>;
    this.heap[i] = this.heap[j] as Entry<T>;
    this.heap[j] = tmp;
  }
}
