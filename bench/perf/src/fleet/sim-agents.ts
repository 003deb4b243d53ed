/**
 * A bench child simulating `AGENT_COUNT` agents (`fleet-<AGENT_FROM + i>`) of `--modes fleet`.
 * Each has a real registration, token and inbox: it registers over HTTP with the agent key,
 * heartbeats every 5 s (one request each, or those due within a second in one request), and answers every probe and task in its
 * inbox as the worker-sdk does — a completion standing for its receipt (`received_ago_ms`), then
 * the XACK. Inboxes are read with non-blocking XREADGROUPs of up to 500 streams every 200 ms,
 * which is why all agents of one generation share an instance_id (a read names one consumer).
 */
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import {
  decodeTask,
  encodeAck,
  REGISTRY_SETTINGS,
  WORKER_GROUP,
  PROBE_CAPABILITY,
} from '@agent-reach/protocol';
import { announceReady, env, envInt, exitWithParent } from '../load/child.ts';
import { summarize } from '../stats.ts';
import {
  FLEET_CAPABILITY,
  MAX_BEATS_PER_REQUEST,
  type BeatMode,
  type FleetCommand,
  type FleetReply,
  type SimCounts,
} from './messages.ts';

const TICK_MS = 50;
/** Batched beats are gathered this long (as a relay would), so a request carries many. */
const BATCH_EVERY_MS = 1000;
const READ_EVERY_MS = 200;
const STREAMS_PER_READ = 500;
const MAX_CONCURRENCY = 4;

interface SimAgent {
  id: string;
  instanceId: string;
  epoch: number;
  token: string;
  stream: string;
  acksStream: string;
  /** Next heartbeat due, monotonic ms; 0 while not registered. */
  nextBeat: number;
  lastBeat: number;
  /** The interval its next beat was scheduled with (late is judged against it). */
  every: number;
  beating: boolean;
}

const registryUrl = env('REGISTRY_URL');
const agentKey = env('AGENT_KEY');
const from = envInt('AGENT_FROM', 0);
const count = envInt('AGENT_COUNT', 100);
const name = env('SIM_NAME');
const intervalMs = REGISTRY_SETTINGS.heartbeatIntervalMs.default;

const beatPool = new Pool(registryUrl, {
  connections: envInt('BEAT_CONNECTIONS', 16),
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
});
const registerPool = new Pool(registryUrl, {
  connections: 256,
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
});
const reader = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null });
const writer = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null });

const agents: SimAgent[] = Array.from({ length: count }, (_, i) => ({
  id: `fleet-${from + i}`,
  instanceId: '',
  epoch: 0,
  token: '',
  stream: '',
  acksStream: '',
  nextBeat: 0,
  lastBeat: 0,
  every: intervalMs,
  beating: false,
}));
const byStream = new Map<string, SimAgent>();
const counts: SimCounts = {
  beats: 0,
  beatsFailed: 0,
  beatRequests: 0,
  beatsLate: 0,
  probesAnswered: 0,
  tasksAnswered: 0,
  taskAgents: 0,
};
const taskAgents = new Set<string>();
let mode: BeatMode = 'single';
/** Agents [0, flapCount) heartbeat every flapIntervalMs instead of the registry's interval. */
let flapCount = 0;
let flapIntervalMs: number = intervalMs;
let closing = false;
let lastBatchAt = 0;

const send = (msg: FleetReply) => process.send?.(msg);

async function post(pool: Pool, path: string, auth: string, body: unknown) {
  const res = await pool.request({
    path,
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    json: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
  };
}

async function registerOne(a: SimAgent, instanceId: string): Promise<string | undefined> {
  try {
    const { status, json } = await post(registerPool, '/v1/agents/register', agentKey, {
      agent_id: a.id,
      instance_id: instanceId,
      capabilities: [FLEET_CAPABILITY],
      max_concurrency: MAX_CONCURRENCY,
    });
    const code = json['error'];
    if (status !== 200) return `${status} ${typeof code === 'string' ? code : ''}`.trim();
    if (a.stream) byStream.delete(a.stream);
    a.instanceId = instanceId;
    a.epoch = Number(json['epoch']);
    a.token = String(json['token']);
    a.stream = String(json['stream']);
    a.acksStream = String(json['acks_stream']);
    byStream.set(a.stream, a);
    // A first registration starts beating at a random phase, so beats spread over the interval.
    if (a.nextBeat === 0) a.nextBeat = performance.now() + Math.random() * intervalMs;
    return undefined;
  } catch (err: unknown) {
    return err instanceof Error ? err.name : 'failed';
  }
}

async function registerAll(generation: number, concurrency: number): Promise<void> {
  const t0 = performance.now();
  const instanceId = `${name}-g${generation}`;
  const errors: Record<string, number> = {};
  let ok = 0;
  let next = 0;
  const latencies: number[] = [];
  const worker = async () => {
    while (next < agents.length) {
      const a = agents[next++] as SimAgent;
      const t = performance.now();
      const error = await registerOne(a, instanceId);
      latencies.push(performance.now() - t);
      if (error === undefined) ok++;
      else errors[error] = (errors[error] ?? 0) + 1;
    }
  };
  const lanes = concurrency > 0 ? Math.min(concurrency, agents.length) : agents.length;
  await Promise.all(Array.from({ length: lanes }, worker));
  const ms = performance.now() - t0;
  const { p50, p99, max } = summarize(latencies);
  send({
    type: 'registered',
    generation,
    ok,
    failed: agents.length - ok,
    errors,
    ms,
    latencyMs: { p50, p99, max },
  });
}

function beatInterval(index: number): number {
  return index < flapCount ? flapIntervalMs : intervalMs;
}

async function beatSingle(a: SimAgent): Promise<void> {
  a.beating = true;
  counts.beatRequests++;
  try {
    const { status } = await post(beatPool, `/v1/agents/${a.id}/heartbeat`, a.token, {
      inflight: 0,
    });
    if (status === 200) counts.beats++;
    else counts.beatsFailed++;
  } catch {
    counts.beatsFailed++;
  } finally {
    a.beating = false;
  }
}

async function beatBatch(batch: SimAgent[]): Promise<void> {
  for (const a of batch) a.beating = true;
  counts.beatRequests++;
  try {
    const { status, json } = await post(beatPool, '/v1/agents/heartbeats', '', {
      beats: batch.map((a) => ({ agent_id: a.id, token: a.token, inflight: 0 })),
    });
    const acks = (json['acks'] ?? []) as { error?: string }[];
    if (status !== 200) counts.beatsFailed += batch.length;
    else
      for (const ack of acks) {
        if (ack.error) counts.beatsFailed++;
        else counts.beats++;
      }
  } catch {
    counts.beatsFailed += batch.length;
  } finally {
    for (const a of batch) a.beating = false;
  }
}

/** Sends the heartbeats that are due; a beat still under way is not sent twice. */
function beatDue(): void {
  const now = performance.now();
  if (mode === 'batch') {
    if (now - lastBatchAt < BATCH_EVERY_MS) return;
    lastBatchAt = now;
  }
  const due: SimAgent[] = [];
  agents.forEach((a, i) => {
    if (a.nextBeat === 0 || a.nextBeat > now || a.beating) return;
    if (a.lastBeat > 0 && now - a.lastBeat > 1.2 * a.every) counts.beatsLate++;
    const every = beatInterval(i);
    a.every = every;
    a.lastBeat = now;
    a.nextBeat = Math.max(a.nextBeat + every, now + every / 2);
    due.push(a);
  });
  if (mode === 'single') for (const a of due) void beatSingle(a);
  else
    for (let i = 0; i < due.length; i += MAX_BEATS_PER_REQUEST)
      void beatBatch(due.slice(i, i + MAX_BEATS_PER_REQUEST));
}

type ReadReply = [string, [string, string[]][]][] | null;

/** Reads every inbox once (no BLOCK) and answers what it finds, as the worker-sdk would. */
async function readInboxes(): Promise<void> {
  const byConsumer = new Map<string, SimAgent[]>();
  for (const a of byStream.values()) {
    const list = byConsumer.get(a.instanceId) ?? [];
    list.push(a);
    byConsumer.set(a.instanceId, list);
  }
  const readAt = performance.now();
  const reads: Promise<ReadReply>[] = [];
  for (const [consumer, list] of byConsumer)
    for (let i = 0; i < list.length; i += STREAMS_PER_READ) {
      const streams = list.slice(i, i + STREAMS_PER_READ).map((a) => a.stream);
      reads.push(
        reader.xreadgroup(
          'GROUP',
          WORKER_GROUP,
          consumer,
          'COUNT',
          MAX_CONCURRENCY,
          'STREAMS',
          ...streams,
          ...streams.map(() => '>'),
        ) as Promise<ReadReply>,
      );
    }
  const pipe = writer.pipeline();
  let n = 0;
  for (const reply of await Promise.all(reads))
    for (const [stream, entries] of reply ?? []) {
      const a = byStream.get(stream);
      if (!a) continue;
      for (const [id, fields] of entries) {
        const task = decodeTask(fields);
        if (task.ok) {
          const t = task.value;
          const probe = t.capability === PROBE_CAPABILITY;
          if (probe) counts.probesAnswered++;
          else {
            counts.tasksAnswered++;
            taskAgents.add(a.id);
            counts.taskAgents = taskAgents.size;
          }
          pipe.xadd(
            a.acksStream,
            '*',
            ...encodeAck({
              task_id: t.task_id,
              stage: 'completed',
              agent_id: a.id,
              instance_id: a.instanceId,
              epoch: a.epoch,
              attempt: t.attempt,
              result: t.payload || '{}',
              duration_ms: 0,
              capability: t.capability,
              received_ago_ms: Math.round(performance.now() - readAt),
            }),
          );
        }
        pipe.xack(stream, WORKER_GROUP, id);
        n++;
      }
    }
  if (n > 0) await pipe.exec();
}

function onCommand(cmd: FleetCommand): void {
  if (cmd.type === 'register') void registerAll(cmd.generation, cmd.concurrency);
  else if (cmd.type === 'beats') {
    mode = cmd.mode;
    flapCount = Math.round(cmd.flapShare * agents.length);
    flapIntervalMs = cmd.flapIntervalMs;
  } else send({ type: 'counts', ...counts });
}

process.on('message', (m) => onCommand(m as FleetCommand));
const beatTimer = setInterval(beatDue, TICK_MS);
let reading = false;
const readTimer = setInterval(() => {
  if (reading || closing) return;
  reading = true;
  readInboxes()
    .catch(() => undefined)
    .finally(() => {
      reading = false;
    });
}, READ_EVERY_MS);
exitWithParent(async () => {
  closing = true;
  clearInterval(beatTimer);
  clearInterval(readTimer);
  await Promise.allSettled([beatPool.close(), registerPool.close()]);
  reader.disconnect();
  writer.disconnect();
});
announceReady({ agents: count });
