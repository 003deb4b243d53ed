/**
 * Valid work flowing while the fuzz runs: a steady stream of well-formed tasks for a capability
 * that live agents serve, each of which must complete — the fuzz must not starve, corrupt or
 * lose a real caller's task.
 */
import { waitFor } from '@agent-reach/testkit';

/** Tries of one submission answered 429 before it counts as refused. */
const MAX_ATTEMPTS = 20;

/** Options of {@link TaskFlow}. */
export interface TaskFlowOptions {
  routerUrl: string;
  capability: string;
  /** Task ids are `<idPrefix>-<n>`. */
  idPrefix: string;
  /** Pause between submissions. @default 25 */
  intervalMs?: number;
  /** Headers of every request (credentials). */
  headers?: Record<string, string>;
  /** Every tenth task goes to this callback topic. */
  callbackTopic?: string;
}

/** Submits valid tasks until stopped, then checks that every accepted one completed. */
export class TaskFlow {
  /** Ids of the tasks the router accepted (202). */
  readonly accepted: string[] = [];
  /** Submissions the router did not accept, with its reply. */
  readonly refused: string[] = [];
  /** Submissions answered 429 and sent again. */
  retried = 0;
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private n = 0;

  constructor(private readonly opts: TaskFlowOptions) {}

  /** Submits `count` tasks now (before the fuzz: ids for it to probe) and waits for the replies. */
  async submit(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await this.submitOne());
    return ids;
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.submitOne();
        await new Promise((r) => setTimeout(r, this.opts.intervalMs ?? 25));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Waits until every accepted task completed; returns those that did not in time. */
  async unfinished(timeoutMs: number): Promise<{ id: string; status: string }[]> {
    const pending = new Set(this.accepted);
    const last = new Map<string, string>();
    try {
      await waitFor(
        async () => {
          for (const id of [...pending]) {
            const res = await fetch(`${this.opts.routerUrl}/v1/tasks/${id}`, {
              headers: this.opts.headers ?? {},
            });
            const body = (await res.json()) as { status?: string; error?: string };
            last.set(id, body.status ?? `${res.status} ${body.error}`);
            if (body.status === 'completed') pending.delete(id);
          }
          return pending.size === 0;
        },
        { timeoutMs, intervalMs: 250, message: 'every valid task completes' },
      );
    } catch {
      // Reported below, task by task.
    }
    return [...pending].map((id) => ({ id, status: last.get(id) ?? 'unknown' }));
  }

  private async submitOne(): Promise<string> {
    const n = this.n++;
    const id = `${this.opts.idPrefix}-${n}`;
    const body = {
      task_id: id,
      capability: this.opts.capability,
      payload: { n, text: 'valid work' },
      ...(this.opts.callbackTopic && n % 10 === 0
        ? { callback_topic: this.opts.callbackTopic }
        : {}),
    };
    // A 429 (every agent busy, or a quota) asks the caller to retry shortly with the same
    // task_id, as a real caller does; anything else that is not an acceptance counts as refused.
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fetch(`${this.opts.routerUrl}/v1/tasks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.opts.headers ?? {}) },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status === 202 || res.status === 200) this.accepted.push(id);
        else if (res.status === 429 && attempt < MAX_ATTEMPTS) {
          this.retried += 1;
          await new Promise((r) => setTimeout(r, 100 * attempt));
          continue;
        } else this.refused.push(`${id}: ${res.status} ${text.slice(0, 200)}`);
      } catch (err) {
        this.refused.push(`${id}: ${(err as Error).message}`);
      }
      return id;
    }
  }
}
