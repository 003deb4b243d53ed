/**
 * `--modes fleet`'s two timings through the router: a paced submit load to the capability every
 * simulated agent serves, and how long a new agent takes to become routable.
 */
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { encodeAck, WORKER_GROUP } from '@agent-reach/protocol';
import { sleep } from '../clock.ts';
import { summarize, type Summary } from '../stats.ts';

/** A paced run's submit latencies and how the router answered. */
export interface PacedSubmits {
  rate: number;
  seconds: number;
  /** POST /v1/tasks answer time, from each task's scheduled moment. */
  latency: Summary;
  /** The same from the moment the request went out (the bench's own lateness left out). */
  fromSend: Summary;
  /** Answers by status or error code (`sent`, `AT_CAPACITY`, …). */
  outcomes: Record<string, number>;
  /** The slowest submits: their answer time and task_id, to read their timelines. */
  slowest: { ms: number; taskId: string }[];
  /** Tasks the simulated agents answered within a second of the last submit, and how many agents got one. */
  answered?: number;
  agents?: number;
}

const textOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

async function submit(
  pool: Pool,
  key: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await pool.request({
    path: '/v1/tasks',
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    json: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
  };
}

/** Submits `rate` tasks/s for `seconds`, open loop, each timed from its scheduled moment. */
export async function pacedSubmits(
  routerUrl: string,
  callerKey: string,
  capability: string,
  rate: number,
  seconds: number,
): Promise<PacedSubmits> {
  const pool = new Pool(routerUrl, { connections: 32 });
  const samples: number[] = [];
  const fromSend: number[] = [];
  const slow: { ms: number; taskId: string }[] = [];
  const outcomes: Record<string, number> = {};
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / rate;
    const wait = at - performance.now();
    if (wait > 1) await sleep(wait);
    const sentAt = performance.now();
    pending.push(
      submit(pool, callerKey, { capability, payload: { i }, timeout_s: 60 }).then(
        ({ json }) => {
          samples.push(performance.now() - at);
          fromSend.push(performance.now() - sentAt);
          const taskId = textOf(json['task_id']);
          if (taskId) slow.push({ ms: performance.now() - sentAt, taskId });
          const outcome = textOf(json['status']) ?? textOf(json['error']) ?? 'unknown';
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        },
        (err: unknown) => {
          const outcome = err instanceof Error ? err.name : 'failed';
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(pending);
  await pool.close();
  const slowest = slow.sort((a, b) => b.ms - a.ms).slice(0, 3);
  return {
    rate,
    seconds,
    latency: summarize(samples),
    fromSend: summarize(fromSend),
    outcomes,
    slowest,
  };
}

/** How long one more agent, of a capability of its own, took to be routed a task. */
export interface Routable {
  /** Register call → its reply. */
  registerMs: number;
  /** Register call → a submit to its capability delivered to its inbox. */
  routableMs: number;
  /** Submits answered NO_AGENT (or anything but sent) before one was. */
  refusedSubmits: number;
}

/**
 * Registers agent `agentId` with capability `capability`, then submits to that capability every
 * 20 ms until one is sent, while reading its inbox with a blocking XREADGROUP; the time runs from
 * the register call to the entry's arrival. The task is answered and the agent deregistered.
 */
export async function timeRoutable(o: {
  registryUrl: string;
  routerUrl: string;
  redisUrl: string;
  agentKey: string;
  callerKey: string;
  agentId: string;
  capability: string;
  timeoutMs: number;
}): Promise<Routable> {
  const reader = new Redis(o.redisUrl, { maxRetriesPerRequest: null });
  const routerPool = new Pool(o.routerUrl, { connections: 2 });
  try {
    const t0 = performance.now();
    const res = await fetch(`${o.registryUrl}/v1/agents/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${o.agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        agent_id: o.agentId,
        instance_id: `${o.agentId}-a`,
        capabilities: [o.capability],
        max_concurrency: 1,
      }),
    });
    const reply = (await res.json()) as Record<string, unknown>;
    const registerMs = performance.now() - t0;
    if (res.status !== 200) throw new Error(`register answered ${res.status}`);
    const stream = String(reply['stream']);
    const read = reader.xreadgroup(
      'GROUP',
      WORKER_GROUP,
      `${o.agentId}-a`,
      'COUNT',
      1,
      'BLOCK',
      o.timeoutMs,
      'STREAMS',
      stream,
      '>',
    ) as Promise<[string, [string, string[]][]][] | null>;
    let delivered = false;
    let refusedSubmits = 0;
    const arrived = read.then((r) => {
      delivered = true;
      return { at: performance.now(), entry: r?.[0]?.[1][0] };
    });
    while (!delivered && performance.now() - t0 < o.timeoutMs) {
      const { json } = await submit(routerPool, o.callerKey, {
        capability: o.capability,
        payload: {},
        timeout_s: 60,
      });
      if (json['status'] === 'sent') break;
      refusedSubmits++;
      await sleep(20);
    }
    const { at, entry } = await arrived;
    if (!entry) throw new Error(`no task reached ${o.agentId} within ${o.timeoutMs} ms`);
    const [id, fields] = entry;
    const get = (f: string) => fields[fields.indexOf(f) + 1] ?? '';
    await reader.xadd(
      String(reply['acks_stream']),
      '*',
      ...encodeAck({
        task_id: get('task_id'),
        stage: 'completed',
        agent_id: o.agentId,
        instance_id: `${o.agentId}-a`,
        epoch: Number(reply['epoch']),
        attempt: Number(get('attempt')),
        result: '{}',
        duration_ms: 0,
        received_ago_ms: 0,
      }),
    );
    await reader.xack(stream, WORKER_GROUP, id);
    await fetch(`${o.registryUrl}/v1/agents/${o.agentId}/deregister`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(reply['token'])}` },
    });
    return { registerMs, routableMs: at - t0, refusedSubmits };
  } finally {
    reader.disconnect();
    await routerPool.close();
  }
}
