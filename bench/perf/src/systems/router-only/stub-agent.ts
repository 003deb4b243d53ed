/**
 * Agents for `--modes router-only` that cost next to nothing, so the router's core is measured
 * and not theirs: each agent in `AGENTS` (`<agent_id>=<capability>`, comma-separated) registers
 * over HTTP and then speaks plain Redis, as docs/PROTOCOL.md tells a worker in any language to
 * (test/e2e/raw-redis-worker.test.ts plays the same). A read batch (`XREADGROUP COUNT
 * <max_concurrency>` on the agent's inbox) is answered in one pipeline: one `completed` ack per
 * entry, its receipt folded in (`received_ago_ms`, as the worker-sdk does for a task that ends
 * before its receipt goes out), and one XACK for the batch. Every agent's heartbeat goes in one
 * `POST /v1/agents/heartbeats`. The result is `{"r": <monotonic ms at the read>}`, as the bench's
 * SDK agents answer; probes are answered with their payload.
 *
 * Environment: REACH_REGISTRY_URL, REDIS_URL, AGENTS, MAX_CONCURRENCY.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  decodeTask,
  encodeAck,
  PROBE_CAPABILITY,
  ROUTES,
  withAckSignature,
  type RegisterReply,
} from '@agent-reach/protocol';
import { monoMs, sleep } from '../../clock.ts';
import { agentSpecs, announceReady, env, envInt, exitWithParent } from '../../load/child.ts';

type ReadReply = [string, [string, string[]][]][] | null;

const registryUrl = env('REACH_REGISTRY_URL');
const redisUrl = env('REDIS_URL');
const maxConcurrency = envInt('MAX_CONCURRENCY', 100);
const specs = agentSpecs();

/** Every agent's acks and XACKs go out on this one connection. */
const writer = new Redis(redisUrl);
const readers: Redis[] = [];
let closed = false;

async function postJson(path: string, body: unknown, token?: string): Promise<unknown> {
  const res = await fetch(`${registryUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const reply: unknown = await res.json();
  if (res.status !== 200)
    throw new Error(`${path} answered ${res.status}: ${JSON.stringify(reply)}`);
  return reply;
}

/** The `completed` ack of one entry, signed when the registration asked for it. */
function completion(reg: RegisterReply, fields: string[], readAt: number): string[] | undefined {
  const task = decodeTask(fields);
  if (!task.ok) return undefined;
  const t = task.value;
  const ack = encodeAck({
    task_id: t.task_id,
    stage: 'completed',
    agent_id: reg.agent_id,
    instance_id: reg.instance_id,
    epoch: reg.epoch,
    attempt: t.attempt,
    result: t.capability === PROBE_CAPABILITY ? t.payload : `{"r":${readAt}}`,
    duration_ms: 0,
    capability: t.capability,
    received_ago_ms: 0,
  });
  return reg.ack_key ? withAckSignature(ack, reg.ack_key) : ack;
}

/** Reads the agent's inbox until closed, each batch answered in one pipeline before the next read. */
async function serve(reg: RegisterReply): Promise<void> {
  const reader = new Redis(redisUrl, { maxRetriesPerRequest: null });
  readers.push(reader);
  while (!closed) {
    let reply: ReadReply;
    try {
      reply = (await reader.xreadgroup(
        'GROUP',
        reg.group,
        reg.instance_id,
        'COUNT',
        maxConcurrency,
        'BLOCK',
        1000,
        'STREAMS',
        reg.stream,
        '>',
      )) as ReadReply;
    } catch {
      if (!closed) await sleep(100);
      continue;
    }
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) continue;
    const readAt = monoMs();
    const pipe = writer.pipeline();
    for (const [, fields] of entries) {
      const ack = completion(reg, fields, readAt);
      // An entry that is not a task is only acknowledged, as the worker-sdk drops it.
      if (ack) pipe.xadd(reg.acks_stream, '*', ...ack);
    }
    pipe.xack(reg.stream, reg.group, ...entries.map(([id]) => id));
    try {
      await pipe.exec();
    } catch (err: unknown) {
      process.stderr.write(`stub agent: acks failed: ${String(err)}\n`);
    }
  }
}

/** Every agent's heartbeat in one request, every `heartbeat_interval_ms`. */
function heartbeat(regs: readonly RegisterReply[]): NodeJS.Timeout {
  const beats = regs.map((r) => ({ agent_id: r.agent_id, token: r.token, inflight: 0 }));
  const timer = setInterval(
    () => {
      postJson(ROUTES.heartbeats, { beats }).catch((err: unknown) =>
        process.stderr.write(`stub agent: heartbeat failed: ${String(err)}\n`),
      );
    },
    Math.min(...regs.map((r) => r.heartbeat_interval_ms)),
  );
  timer.unref();
  return timer;
}

/** What is running, for the close below. */
const running: { regs: RegisterReply[]; loops: Promise<void>[]; beating?: NodeJS.Timeout } = {
  regs: [],
  loops: [],
};

exitWithParent(async () => {
  closed = true;
  clearInterval(running.beating);
  for (const r of readers) r.disconnect();
  await Promise.allSettled(running.loops);
  await Promise.allSettled(
    running.regs.map(async (r) => postJson(ROUTES.deregister(r.agent_id), {}, r.token)),
  );
  await writer.quit();
}, 10_000);
running.regs = await Promise.all(
  specs.map(
    async ({ agentId, capability }) =>
      (await postJson(ROUTES.register, {
        agent_id: agentId,
        instance_id: `${agentId}-${randomUUID()}`,
        capabilities: [capability],
        max_concurrency: maxConcurrency,
      })) as RegisterReply,
  ),
);
running.beating = heartbeat(running.regs);
running.loops = running.regs.map(serve);
announceReady({ agents: running.regs.map((r) => r.agent_id) });
