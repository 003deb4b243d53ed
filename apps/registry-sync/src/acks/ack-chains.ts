/** An entry of the acks stream: its id and its field list. */
export type AckEntry = [id: string, fields: string[]];

/** The task an ack entry is about ('' when it names none: such entries go one after another). */
export function taskOf(fields: readonly string[]): string {
  const i = fields.indexOf('task_id');
  return i >= 0 && i % 2 === 0 ? (fields[i + 1] ?? '') : '';
}

/** Stream order of two entry ids (`<ms>-<seq>`). */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}

/**
 * Applies ack entries concurrently while the entries of one task go one after the other, in the
 * order they were added (stream order), across read batches. An entry that fails is held with
 * every later entry of its task until {@link takeHeld} hands them back to be applied again, so a
 * task's acks never overtake one another.
 */
export class AckChains {
  /** Per task, the last of its entries added: resolves true once applied. */
  readonly #chains = new Map<string, Promise<boolean>>();
  readonly #held = new Map<string, AckEntry>();
  readonly #heldTasks = new Set<string>();

  constructor(
    private readonly apply: (id: string, fields: string[]) => Promise<void>,
    private readonly hooks: { applied(id: string): void; failed(id: string, err: unknown): void },
  ) {}

  /** Entries held after a failure. */
  get heldCount(): number {
    return this.#held.size;
  }

  /** Applies `entry` once the previous entry of its task is applied; resolves whether it was. */
  add(entry: AckEntry): Promise<boolean> {
    const task = taskOf(entry[1]);
    const previous = this.#chains.get(task);
    const applied = this.#applyAfter(previous, task, entry).finally(() => {
      if (this.#chains.get(task) === applied) this.#chains.delete(task);
    });
    this.#chains.set(task, applied);
    return applied;
  }

  /** The held entries in stream order, released from the hold (add them again to retry). */
  takeHeld(): AckEntry[] {
    const entries = [...this.#held.values()].sort((a, b) => compareIds(a[0], b[0]));
    this.#held.clear();
    this.#heldTasks.clear();
    return entries;
  }

  /** Resolves once every entry added so far has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.#chains.values()]);
  }

  async #applyAfter(
    previous: Promise<boolean> | undefined,
    task: string,
    entry: AckEntry,
  ): Promise<boolean> {
    const [id, fields] = entry;
    if (previous !== undefined) await previous;
    if (this.#heldTasks.has(task)) {
      this.#held.set(id, entry);
      return false;
    }
    try {
      await this.apply(id, fields);
    } catch (err: unknown) {
      this.#heldTasks.add(task);
      this.#held.set(id, entry);
      this.hooks.failed(id, err);
      return false;
    }
    this.hooks.applied(id);
    return true;
  }
}
