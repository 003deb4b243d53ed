import { http } from './stack.ts';
import { connectRedis } from './redis.ts';

/** A task as the worker read it from its inbox. */
export interface RawTask {
  task_id: string;
  capability: string;
  attempt: string;
  payload: unknown;
}

/** What the worker does with a task: complete it, fail it (retryable or not), or read it and never answer. */
export type RawOutcome =
  { result: unknown; duration_ms?: number } | { error: string; retryable?: boolean } | 'ignore';

/** A scripted worker played with raw Redis commands (docs/PROTOCOL.md), for tests. */
export interface ScriptedWorker {
  agentId: string;
  /** Task ids in the order they were read. */
  seen: string[];
  stop(): Promise<void>;
}

type Entry = [string, string[]];
type ReadReply = [string, Entry[]][] | null;

function fieldsOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

/**
 * Unlike support/raw-worker.ts (which echoes every task), each task's outcome is scripted.
 * Registers over HTTP, heartbeats every 500 ms, and reads its inbox with XREADGROUP in a loop:
 * each task gets a receipt at once, then what `handle` says (tasks of other capabilities, such
 * as registry-sync's liveness probes, are simply completed), then XACK.
 */
export async function startScriptedWorker(opts: {
  redisUrl: string;
  /** Seeds of a Redis Cluster (`Stack.redisClusterNodes`); empty or absent for one Redis. */
  redisClusterNodes?: string;
  registryUrl: string;
  agentId: string;
  capabilities: string[];
  handle: (task: RawTask) => RawOutcome;
}): Promise<ScriptedWorker> {
  const instance = `${opts.agentId}-i`;
  const reg = await http<{
    epoch: number;
    token: string;
    stream: string;
    group: string;
    acks_stream: string;
  }>(`${opts.registryUrl}/v1/agents/register`, {
    body: {
      agent_id: opts.agentId,
      instance_id: instance,
      capabilities: opts.capabilities,
      max_concurrency: 4,
    },
  });
  if (reg.status !== 200)
    throw new Error(`register failed: ${reg.status} ${JSON.stringify(reg.body)}`);
  const { epoch, token, stream, group, acks_stream: acks } = reg.body;
  const redis = connectRedis(opts, { maxRetriesPerRequest: null });
  const seen: string[] = [];
  let closing = false;
  const beat = setInterval(() => {
    void http(`${opts.registryUrl}/v1/agents/${opts.agentId}/heartbeat`, {
      body: { inflight: 0 },
      headers: { authorization: `Bearer ${token}` },
    }).catch(() => undefined);
  }, 500);

  const ack = (task: Record<string, string>, stage: string, ...extra: string[]) =>
    redis.xadd(
      acks,
      '*',
      'task_id',
      task.task_id ?? '',
      'agent_id',
      opts.agentId,
      'instance_id',
      instance,
      'epoch',
      String(epoch),
      'attempt',
      task.attempt ?? '1',
      'stage',
      stage,
      ...extra,
    );

  const loop = (async () => {
    while (!closing) {
      let read: ReadReply;
      try {
        read = (await redis.call(
          'XREADGROUP',
          'GROUP',
          group,
          instance,
          'COUNT',
          '10',
          'BLOCK',
          '200',
          'STREAMS',
          stream,
          '>',
        )) as ReadReply;
      } catch {
        continue; // Redis restarting or the test ending: try again until closing.
      }
      for (const [id, flat] of read?.[0]?.[1] ?? []) {
        const f = fieldsOf(flat);
        seen.push(f.task_id ?? '');
        let payload: unknown;
        try {
          payload = JSON.parse(f.payload ?? 'null');
        } catch {
          payload = f.payload;
        }
        const outcome = opts.capabilities.includes(f.capability ?? '')
          ? opts.handle({
              task_id: f.task_id ?? '',
              capability: f.capability ?? '',
              attempt: f.attempt ?? '1',
              payload,
            })
          : { result: payload };
        if (outcome === 'ignore') continue;
        await ack(f, 'received');
        if ('error' in outcome) {
          await ack(
            f,
            'failed',
            'error',
            outcome.error,
            'duration_ms',
            '1',
            'retryable',
            outcome.retryable === false ? 'false' : 'true',
          );
        } else {
          await ack(
            f,
            'completed',
            'result',
            JSON.stringify(outcome.result) ?? 'null',
            'duration_ms',
            String(outcome.duration_ms ?? 1),
          );
        }
        await redis.xack(stream, group, id);
      }
    }
  })().catch(() => undefined); // An ack that fails ends the loop; the test then times out saying what it waited for.

  return {
    agentId: opts.agentId,
    seen,
    async stop() {
      closing = true;
      clearInterval(beat);
      await loop;
      await redis.quit();
    },
  };
}
