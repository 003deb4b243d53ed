import { waitFor } from '@agent-reach/testkit';
import { http, type Stack } from './stack.ts';
import { connectRedis, type TestRedis } from './redis.ts';

type Entry = [string, string[]];
type ReadReply = [string, Entry[]][] | null;

/** The register reply fields a raw worker uses. */
export interface Registration {
  agent_id: string;
  instance_id: string;
  epoch: number;
  token: string;
  stream: string;
  group: string;
  acks_stream: string;
}

/** How a raw worker beats and answers probes. */
export interface RawWorkerOptions {
  heartbeatMs?: number;
  /** The runtime figures each heartbeat carries. */
  runtime?: { loop_lag_p99_ms: number; gc_share?: number; rss_bytes: number };
  /** The health check answer each probe's completion carries (`health`). */
  probeHealth?: { ok: boolean; dependencies: Record<string, { ok: boolean; latency_ms?: number }> };
}

/** What a raw worker saw: each task entry's fields, by task_id. */
export type SeenTasks = Map<string, Record<string, string>>;

/**
 * An agent played with raw Redis commands, as docs/PROTOCOL.md describes: it registers over
 * HTTP, heartbeats, reads its inbox with XREADGROUP, reports receipt and completion on the acks
 * stream (the result is the payload: an echo) and XACKs. Probes are answered like any task, with
 * `probeHealth` as their `health` field when given; heartbeats carry `runtime` when given.
 */
export class RawWorker {
  readonly seen: SeenTasks = new Map();
  private running = true;
  private loop: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly conn: TestRedis;

  private constructor(
    private readonly stack: Stack,
    readonly reg: Registration,
    private readonly opts: RawWorkerOptions = {},
  ) {
    this.conn = connectRedis(stack, { maxRetriesPerRequest: null });
  }

  /** Registers `body` and starts reading and heartbeating. */
  static async start(
    stack: Stack,
    body: Record<string, unknown>,
    opts: RawWorkerOptions = {},
  ): Promise<RawWorker> {
    const res = await http<Registration>(`${stack.registryUrl}/v1/agents/register`, { body });
    if (res.status !== 200)
      throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
    const worker = new RawWorker(stack, res.body, opts);
    worker.loop = worker.run();
    worker.heartbeat = setInterval(() => void worker.beat(), opts.heartbeatMs ?? 1000);
    return worker;
  }

  /** Stops reading and heartbeating. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.heartbeat);
    this.conn.disconnect();
    await this.loop;
  }

  private async beat(): Promise<void> {
    await http(`${this.stack.registryUrl}/v1/agents/${this.reg.agent_id}/heartbeat`, {
      body: { inflight: 0, ...(this.opts.runtime ? { runtime: this.opts.runtime } : {}) },
      headers: { authorization: `Bearer ${this.reg.token}` },
    }).catch(() => undefined);
  }

  private async run(): Promise<void> {
    const { stream, group, instance_id: consumer } = this.reg;
    while (this.running) {
      let reply: ReadReply;
      try {
        reply = (await this.conn.call(
          'XREADGROUP',
          'GROUP',
          group,
          consumer,
          'COUNT',
          '10',
          'BLOCK',
          '1000',
          'STREAMS',
          stream,
          '>',
        )) as ReadReply;
      } catch {
        if (!this.running) return;
        continue;
      }
      try {
        await this.answer(reply);
      } catch (err: unknown) {
        // stop() closed the connection between a read and its acks.
        if (!this.running) return;
        throw err;
      }
    }
  }

  /** Acks each task read as received, then completed, and acknowledges its entry. */
  private async answer(reply: ReadReply): Promise<void> {
    const {
      stream,
      group,
      instance_id: consumer,
      acks_stream: acks,
      agent_id: agentId,
      epoch,
    } = this.reg;
    for (const [entryId, flat] of reply?.[0]?.[1] ?? []) {
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2)
        fields[flat[i] as string] = flat[i + 1] as string;
      const taskId = fields.task_id ?? '';
      this.seen.set(taskId, fields);
      const common = [
        'task_id',
        taskId,
        'agent_id',
        agentId,
        'instance_id',
        consumer,
        'epoch',
        String(epoch),
        'attempt',
        fields.attempt ?? '1',
      ];
      await this.conn.call('XADD', acks, '*', ...common, 'stage', 'received');
      await this.conn.call(
        'XADD',
        acks,
        '*',
        ...common,
        'stage',
        'completed',
        'result',
        fields.payload ?? 'null',
        'duration_ms',
        '2',
        ...(fields.capability === '_probe' && this.opts.probeHealth
          ? ['health', JSON.stringify(this.opts.probeHealth)]
          : []),
      );
      await this.conn.call('XACK', stream, group, entryId);
    }
  }
}

/** Submits a task and waits until it completed; returns its task_id. */
export async function submitAndComplete(
  stack: Stack,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<string> {
  const sub = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, { body, headers });
  if (sub.status !== 202)
    throw new Error(`submit failed: ${sub.status} ${JSON.stringify(sub.body)}`);
  await waitFor(
    async () =>
      (await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}`)).body
        .status === 'completed',
    { message: `task ${sub.body.task_id} did not complete` },
  );
  return sub.body.task_id;
}
