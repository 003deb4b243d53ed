import {
  decodeTask,
  placementMiss,
  PROBE_CAPABILITY,
  WORKER_GROUP,
  type AgentPlacement,
} from '@agent-reach/protocol';
import { http } from './stack.ts';
import { connectRedis, type TestRedis } from './redis.ts';

/**
 * What a fault worker does with each task it reads from now on: complete it, fail it (retryable),
 * or hold it (no receipt, no answer: the server's receipt timeout takes it back).
 */
export type FaultMode = 'complete' | 'fail' | 'hold';

/** Where a fault worker is in its life. */
export type FaultWorkerState = 'running' | 'killed' | 'drained';

/** One task entry a fault worker read. */
export interface ReadRecord {
  taskId: string;
  /** `inbox` for the agent's own stream, `pool` for a capability pool. */
  source: 'inbox' | 'pool';
  /** The entry's fields as read. */
  fields: Record<string, string>;
  /**
   * The worker took the task (reported it). Pool entries it may not take, by the placement the
   * entry carries, are left unreported: the pool gets them back after the receipt timeout.
   */
  taken: boolean;
  /** What the worker did with it. */
  outcome: FaultMode | 'left';
}

/** How to start a {@link FaultWorker}. */
export interface FaultWorkerOptions {
  registryUrl: string;
  redisUrl: string;
  /** Seeds of a Redis Cluster (`Stack.redisClusterNodes`); empty or absent for one Redis. */
  redisClusterNodes?: string;
  agentId: string;
  capabilities: string[];
  region?: string;
  tags?: string[];
  /** @default 'push' */
  channel?: 'push' | 'pull';
  /** @default 4 */
  maxConcurrency?: number;
  /** @default 200 */
  heartbeatMs?: number;
  /** @default 'complete' */
  mode?: FaultMode;
}

type Entry = [string, string[]];
type ReadReply = [string, Entry[]][] | null;

interface Registration {
  instance_id: string;
  epoch: number;
  token: string;
  stream: string;
  group: string;
  acks_stream: string;
  pools?: string[];
}

function fieldsOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

/**
 * An agent played with raw protocol commands (docs/PROTOCOL.md) whose faults a test switches at
 * any moment: `mode` decides what happens to each task read from then on; `kill()` stops its
 * heartbeats and reads at once (it goes OFFLINE and its tasks are taken back); `drain()` stops
 * reading and deregisters. Every entry it reads, from its inbox or a pool, is recorded in
 * `reads`. Probes are answered in every mode while it runs.
 */
export class FaultWorker {
  readonly reads: ReadRecord[] = [];
  private state: FaultWorkerState = 'running';
  private readonly redis: TestRedis;
  private readonly beat: NodeJS.Timeout;
  private loop: Promise<void> = Promise.resolve();
  /** Entries held without a receipt (`<stream> <id>`): they count against the worker's slots. */
  private readonly held = new Set<string>();
  private current: FaultMode;

  private constructor(
    readonly opts: FaultWorkerOptions,
    readonly reg: Registration,
  ) {
    this.current = opts.mode ?? 'complete';
    this.redis = connectRedis(opts, { maxRetriesPerRequest: null });
    this.beat = setInterval(() => void this.heartbeat(), opts.heartbeatMs ?? 200);
  }

  /** Registers the agent and starts heartbeating and reading. */
  static async start(opts: FaultWorkerOptions): Promise<FaultWorker> {
    const res = await http<Registration>(`${opts.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: opts.agentId,
        instance_id: `${opts.agentId}-i`,
        capabilities: opts.capabilities,
        max_concurrency: opts.maxConcurrency ?? 4,
        ...(opts.region ? { region: opts.region } : {}),
        ...(opts.tags && opts.tags.length > 0 ? { tags: opts.tags } : {}),
        channel: opts.channel ?? 'push',
      },
    });
    if (res.status !== 200)
      throw new Error(`register ${opts.agentId}: ${res.status} ${JSON.stringify(res.body)}`);
    const worker = new FaultWorker(opts, res.body);
    worker.loop = worker.run();
    return worker;
  }

  /** What happens to the tasks read from now on. */
  get mode(): FaultMode {
    return this.current;
  }

  /** Leaving `hold` abandons the held tasks (the server takes them back) and frees their slots. */
  set mode(next: FaultMode) {
    if (next !== 'hold') this.held.clear();
    this.current = next;
  }

  get agentId(): string {
    return this.opts.agentId;
  }

  get status(): FaultWorkerState {
    return this.state;
  }

  /** What the agent offers, as it registered. */
  get placement(): Required<AgentPlacement> & { region: string } {
    return {
      region: this.opts.region ?? '',
      tags: this.opts.tags ?? [],
      capabilities: this.opts.capabilities,
    };
  }

  /** Task ids of the entries read, in order. */
  readIds(): string[] {
    return this.reads.map((r) => r.taskId);
  }

  /** Stops heartbeating and reading at once, without a word to the server. */
  async kill(): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'killed';
    await this.close();
  }

  /** Stops reading, then deregisters (the agent is DRAINING; its unread tasks are handed off). */
  async drain(): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'drained';
    clearInterval(this.beat);
    await this.loop;
    const res = await http(`${this.opts.registryUrl}/v1/agents/${this.agentId}/deregister`, {
      method: 'POST',
      body: {},
      headers: { authorization: `Bearer ${this.reg.token}` },
    }).finally(() => this.redis.quit().catch(() => undefined));
    if (res.status !== 200)
      throw new Error(`deregister ${this.agentId}: ${res.status} ${JSON.stringify(res.body)}`);
  }

  private async close(): Promise<void> {
    clearInterval(this.beat);
    await this.loop;
    await this.redis.quit().catch(() => undefined);
  }

  private async heartbeat(): Promise<void> {
    await http(`${this.opts.registryUrl}/v1/agents/${this.agentId}/heartbeat`, {
      body: { inflight: this.held.size },
      headers: { authorization: `Bearer ${this.reg.token}` },
    }).catch(() => undefined);
  }

  private async run(): Promise<void> {
    const { stream, group, instance_id: consumer } = this.reg;
    const pools = this.opts.channel === 'pull' ? (this.reg.pools ?? []) : [];
    const slots = this.opts.maxConcurrency ?? 4;
    while (this.state === 'running') {
      // The inbox is bounded by the router; pools are read only with a free slot.
      const streams = this.held.size < slots ? [stream, ...pools] : [stream];
      let reply: ReadReply;
      try {
        reply = (await this.redis.call(
          'XREADGROUP',
          'GROUP',
          group,
          consumer,
          'COUNT',
          String(Math.max(1, slots - this.held.size)),
          'BLOCK',
          '100',
          'STREAMS',
          ...streams,
          ...streams.map(() => '>'),
        )) as ReadReply;
      } catch {
        if (this.state !== 'running') return;
        continue;
      }
      for (const [from, entries] of reply ?? []) {
        for (const [id, flat] of entries) {
          try {
            await this.onEntry(from, from === stream ? 'inbox' : 'pool', id, flat);
          } catch {
            if (this.state !== 'running') return;
          }
        }
      }
    }
  }

  private async onEntry(
    from: string,
    source: 'inbox' | 'pool',
    id: string,
    flat: string[],
  ): Promise<void> {
    const fields = fieldsOf(flat);
    if (fields.capability === PROBE_CAPABILITY) {
      if (this.state !== 'running') return;
      await this.ack(fields, source, id, 'received');
      await this.ack(fields, source, id, 'completed', 'result', fields.payload ?? 'null');
      await this.redis.xack(from, WORKER_GROUP, id);
      return;
    }
    const record: ReadRecord = {
      taskId: fields.task_id ?? '',
      source,
      fields,
      taken: false,
      outcome: 'left',
    };
    this.reads.push(record);
    // Read after kill() or drain(): the entry sits unanswered, as with an agent that died.
    if (this.state !== 'running') return;
    if (source === 'pool') {
      // A pull agent takes only what it may take, by the placement the entry carries.
      const task = decodeTask(flat);
      if (!task.ok || placementMiss(task.value, this.placement) !== undefined) return;
    }
    record.taken = true;
    record.outcome = this.mode;
    if (this.mode === 'hold') {
      this.held.add(`${from} ${id}`);
      return;
    }
    await this.ack(fields, source, id, 'received');
    if (this.mode === 'fail') {
      await this.ack(fields, source, id, 'failed', 'error', 'scripted failure');
    } else {
      await this.ack(fields, source, id, 'completed', 'result', fields.payload ?? 'null');
    }
    await this.redis.xack(from, WORKER_GROUP, id);
  }

  private ack(
    fields: Record<string, string>,
    source: 'inbox' | 'pool',
    id: string,
    stage: 'received' | 'completed' | 'failed',
    ...extra: string[]
  ): Promise<unknown> {
    const { acks_stream: acks, instance_id: instance, epoch } = this.reg;
    return this.redis.xadd(
      acks,
      '*',
      'task_id',
      fields.task_id ?? '',
      'agent_id',
      this.agentId,
      'instance_id',
      instance,
      'epoch',
      String(epoch),
      'attempt',
      fields.attempt ?? '1',
      'stage',
      stage,
      ...(source === 'pool' ? ['pool', fields.capability ?? '', 'message_id', id] : []),
      ...(stage === 'received' ? [] : ['duration_ms', '1']),
      ...(stage === 'failed' ? ['retryable', 'true'] : []),
      ...extra,
    );
  }
}
