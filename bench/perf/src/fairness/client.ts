import type { FairPayload } from './fleet.ts';

/** One task of a submission. */
export interface FairTask {
  payload: FairPayload;
  fairnessKey?: string;
}

/** Deadline of every task: past any run, so none is dead-lettered while measured. */
const TIMEOUT_S = 600;

/**
 * A tenant's caller: submits with the tenant's key and counts the outcomes by status or error
 * code (`queued`, `QUEUE_FULL`, …).
 */
export class TenantClient {
  readonly outcomes = new Map<string, number>();

  constructor(
    readonly tenant: string,
    private readonly routerUrl: string,
    private readonly key: string,
    private readonly capability: string,
  ) {}

  /** `POST /v1/tasks` of one task. */
  async submit(task: FairTask): Promise<void> {
    const body = (await this.post('/v1/tasks', this.body(task))) as {
      status?: string;
      error?: string;
    };
    this.count(body.status ?? body.error ?? 'unknown');
  }

  /** `POST /v1/tasks/batch`. */
  async submitBatch(tasks: readonly FairTask[]): Promise<void> {
    const body = (await this.post('/v1/tasks/batch', {
      tasks: tasks.map((t) => this.body(t)),
    })) as { results?: { status?: string; error?: string }[]; error?: string };
    if (!body.results) this.count(body.error ?? 'unknown', tasks.length);
    for (const r of body.results ?? []) this.count(r.status ?? r.error ?? 'unknown');
  }

  /** Tasks submitted, whatever the answer. */
  get sent(): number {
    let n = 0;
    for (const v of this.outcomes.values()) n += v;
    return n;
  }

  /** Outcomes as `queued 1,234, QUEUE_FULL 56`. */
  describe(): string {
    return [...this.outcomes]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`)
      .join(', ');
  }

  private body(task: FairTask): Record<string, unknown> {
    return {
      capability: this.capability,
      payload: task.payload,
      timeout_s: TIMEOUT_S,
      ...(task.fairnessKey ? { fairness_key: task.fairnessKey } : {}),
    };
  }

  private count(outcome: string, n = 1): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + n);
  }

  private async post(path: string, body: unknown): Promise<unknown> {
    try {
      const res = await fetch(`${this.routerUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      return await res.json();
    } catch (err: unknown) {
      return { error: err instanceof Error ? err.name : 'failed' };
    }
  }
}
