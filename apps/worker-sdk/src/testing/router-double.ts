/**
 * A stand-in for the router's caller API, for the SDK client's tests: `node:http`, sending tasks
 * to one agent through the router's own send path in real Redis (send-path.ts: the claim, the
 * delivery re-verifying the agent, its slots) and turning that agent's acks into callback-topic
 * items (once per task_id), served by long poll. The end-to-end tests use the real router.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Value } from '@sinclair/typebox/value';
import { claimSubmission, type TaskSpec } from '@agent-reach/dispatch';
import {
  SubmitBody,
  decodeAck,
  type CallbackItem,
  type DeadReason,
  type ErrorCode,
  type ReachKeys,
  type SubmitReply,
  type TaskView,
} from '@agent-reach/protocol';
import { Redis } from 'ioredis';
import { isFinalItem, type FinalCallbackItem } from '../client/callbacks.ts';
import { DoubleSendPath } from './send-path.ts';
import { testLogger } from './support.ts';

/** A running stand-in. */
export interface RouterDouble {
  url: string;
  submits: SubmitBody[];
  /** Poll requests: total, and the most that were open at once. */
  polls: { total: number; open: number; maxOpen: number };
  /** Items published per topic. */
  published(topic: string): CallbackItem[];
  /** Answer the next `n` submits with 503 NO_AGENT, or with 429 AT_CAPACITY (backpressure). */
  refuseSubmits(n: number, as?: 'NO_AGENT' | 'AT_CAPACITY'): void;
  /**
   * Deliver the next `n` new submissions but lose the answer, as a router whose Redis connection
   * broke after the delivery does: answer 503 STORE_UNAVAILABLE, or drop the connection unanswered.
   */
  loseReplies(n: number, how: 'STORE_UNAVAILABLE' | 'drop'): void;
  /** Accept the next submit (202) and dead-letter it at once with this reason, as the loop guard does. */
  deadLetterNext(reason: DeadReason): void;
  /** Publishes an item as the server would (e.g. a dead letter). */
  publish(topic: string, item: Omit<CallbackItem, 'id'>): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function fail(
  res: ServerResponse,
  status: number,
  code: ErrorCode,
  message: string,
  taskId?: string,
): void {
  send(res, status, { error: code, message, ...(taskId === undefined ? {} : { task_id: taskId }) });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text.length === 0 ? undefined : (JSON.parse(text) as unknown);
}

/** How long a submission waits for a free slot before 429 AT_CAPACITY (the router's admission wait). */
const ADMISSION_WAIT_MS = 2000;
/** How often a waiting submission looks again: the double has no capacity notices to wait on. */
const ADMISSION_POLL_MS = 20;

/** The spec the router stores for a submission, as far as the double reads the body. */
function specFromBody(taskId: string, body: SubmitBody, hops: number): TaskSpec {
  return {
    taskId,
    capability: body.capability,
    payload: JSON.stringify(body.payload ?? null),
    callbackTopic: body.callback_topic ?? '',
    traceId: body.trace_id ?? taskId,
    tags: body.tags ?? [],
    region: body.region ?? '',
    regionPolicy: body.region_policy ?? 'prefer',
    sessionId: body.session_id ?? '',
    parentTaskId: body.parent_task_id ?? '',
    hops,
    traceAgents: [],
    tenant: '',
    priority: body.priority ?? 0,
  };
}

/**
 * Starts the stand-in; tasks for `capability` go to `agentId` (429 AT_CAPACITY while its slots
 * are all held, 503 NO_AGENT while it is not live), any other capability gets 503 NO_AGENT.
 */
export async function startRouterDouble(opts: {
  redisUrl: string;
  keys: ReachKeys;
  agentId: string;
  capability: string;
}): Promise<RouterDouble> {
  const redis = new Redis(opts.redisUrl);
  const reader = new Redis(opts.redisUrl);
  for (const r of [redis, reader]) r.on('error', () => undefined);
  const path = new DoubleSendPath(redis, opts.keys, testLogger());
  const topics = new Map<string, CallbackItem[]>();
  /**
   * Where each sent task's final item goes, by task_id: set before the send, since the agent may
   * finish the task before the send's reply is in.
   */
  const routes = new Map<string, { topic: string; capability: string }>();
  const tasks = new Map<
    string,
    { reply: SubmitReply; body: SubmitBody; topic: string; created: number; hops: number }
  >();
  // Each task's hops from the moment it is accepted: its handler may submit a child before the
  // send's reply is back here (the router reads them from the parent's claim the same way).
  const hopsOf = new Map<string, number>();
  const wakers = new Set<() => void>();
  const polls = { total: 0, open: 0, maxOpen: 0 };
  const submits: SubmitBody[] = [];
  let seq = 0;
  let refusing = 0;
  let refusal: 'NO_AGENT' | 'AT_CAPACITY' = 'NO_AGENT';
  let losing = 0;
  let loss: 'STORE_UNAVAILABLE' | 'drop' = 'STORE_UNAVAILABLE';
  let deadLetter: DeadReason | undefined;
  let closed = false;

  const publish = (topic: string, item: Omit<CallbackItem, 'id'>): void => {
    const list = topics.get(topic) ?? [];
    if (list.some((i) => i.task_id === item.task_id)) return; // one final item per task_id
    list.push({ ...item, id: `${++seq}-0` });
    topics.set(topic, list);
    for (const wake of [...wakers]) wake();
  };

  // Acks → callback items, as registry-sync does.
  const pump = (async () => {
    let last = '0';
    while (!closed) {
      const reply = await reader
        .xread('BLOCK', 100, 'STREAMS', opts.keys.acks(), last)
        .catch(() => null);
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          last = id;
          const ack = decodeAck(fields);
          if (!ack.ok || ack.value.stage === 'received' || ack.value.stage === 'renew') continue;
          const task = routes.get(ack.value.task_id);
          if (task === undefined) continue;
          const item: Omit<CallbackItem, 'id'> = {
            task_id: ack.value.task_id,
            status: ack.value.stage,
            capability: task.capability,
            agent_id: ack.value.agent_id,
            attempt: ack.value.attempt,
            completed_at: Date.now(),
          };
          if (ack.value.result !== undefined) item.result = JSON.parse(ack.value.result) as unknown;
          if (ack.value.error !== undefined) item.error = ack.value.error;
          if (ack.value.duration_ms !== undefined) item.duration_ms = ack.value.duration_ms;
          publish(task.topic, item);
        }
      }
    }
  })();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/v1/tasks') {
      const body = await readJson(req);
      if (!Value.Check(SubmitBody, body))
        return fail(res, 400, 'INVALID_BODY', 'body does not match SubmitBody');
      submits.push(body);
      // As the router does: the task_id is fixed first, and every error reply carries it.
      const taskId = body.task_id ?? randomUUID();
      if (refusing > 0) {
        refusing -= 1;
        return refusal === 'AT_CAPACITY'
          ? fail(
              res,
              429,
              'AT_CAPACITY',
              'every agent is at max_concurrency; retry shortly',
              taskId,
            )
          : fail(res, 503, 'NO_AGENT', 'every agent is busy; retry shortly', taskId);
      }
      const known = tasks.get(taskId);
      if (known !== undefined) return send(res, 200, known.reply);
      if (body.capability !== opts.capability)
        return fail(res, 503, 'NO_AGENT', `no live agent serves ${body.capability}`, taskId);
      const topic = body.callback_topic ?? '';
      // One more hop than the parent (a parent the router never saw counts as a caller's own).
      const hops =
        body.parent_task_id === undefined ? 0 : (hopsOf.get(body.parent_task_id) ?? 0) + 1;
      hopsOf.set(taskId, hops);
      if (deadLetter !== undefined) {
        const reason = deadLetter;
        deadLetter = undefined;
        const reply: SubmitReply = {
          task_id: taskId,
          status: 'dead',
          agent_id: '',
          stream: '',
          message_id: '',
        };
        tasks.set(taskId, { reply, body, topic, created: Date.now(), hops });
        publish(topic, {
          task_id: taskId,
          status: 'dead',
          capability: body.capability,
          agent_id: '',
          attempt: 0,
          error: reason,
          completed_at: Date.now(),
        });
        return send(res, 202, reply);
      }
      const spec = specFromBody(taskId, body, hops);
      const nonce = randomUUID();
      const sendOnce = () =>
        path.toAgent(
          opts.agentId,
          spec,
          claimSubmission(redis, opts.keys, path.delivery, {
            task: spec,
            nonce,
            timeoutMs: (body.timeout_s ?? 0) * 1000,
            watchdogAt: Date.now() + 60_000,
          }),
        );
      routes.set(taskId, { topic, capability: body.capability });
      // Like the router, a submission finding every slot held waits a while for one to free.
      const until = Date.now() + ADMISSION_WAIT_MS;
      let outcome = await sendOnce();
      while (outcome.kind === 'refused' && outcome.allFull && Date.now() < until && !closed) {
        await new Promise((resolve) => setTimeout(resolve, ADMISSION_POLL_MS));
        outcome = await sendOnce();
      }
      if (outcome.kind !== 'sent') routes.delete(taskId);
      if (outcome.kind === 'refused') {
        return outcome.allFull
          ? fail(res, 429, 'AT_CAPACITY', `${opts.agentId} is at max_concurrency`, taskId)
          : fail(res, 503, 'NO_AGENT', `${opts.agentId} is not live`, taskId);
      }
      // Claimed by a submission this double never saw: the router's answer while it is written.
      if (outcome.kind === 'not_ours')
        return fail(res, 503, 'STORE_UNAVAILABLE', `task ${taskId} is being written`, taskId);
      const reply: SubmitReply = {
        task_id: taskId,
        status: 'sent',
        agent_id: outcome.agentId,
        stream: outcome.stream,
        message_id: outcome.messageId,
      };
      tasks.set(taskId, { reply, body, topic, created: Date.now(), hops });
      if (losing > 0) {
        losing -= 1;
        if (loss === 'drop') return void res.destroy();
        return fail(res, 503, 'STORE_UNAVAILABLE', 'the store (Redis) is unavailable', taskId);
      }
      return send(res, 202, reply);
    }
    const task = /^\/v1\/tasks\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && task !== null) {
      const t = tasks.get(decodeURIComponent(task[1] ?? ''));
      if (t === undefined) return fail(res, 404, 'TASK_NOT_FOUND', 'no such task');
      const item = topics
        .get(t.topic)
        ?.find((i): i is FinalCallbackItem => i.task_id === t.reply.task_id && isFinalItem(i));
      const view: TaskView = {
        task_id: t.reply.task_id,
        status: item?.status ?? 'sent',
        capability: t.body.capability,
        agent_id: opts.agentId,
        attempts: 1,
        created_at: t.created,
        deadline_ms: 0,
        timeline: [{ stage: 'sent', at: t.created }],
      };
      return send(res, 200, view);
    }
    const cb = /^\/v1\/callbacks\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && cb !== null) {
      const topic = decodeURIComponent(cb[1] ?? '');
      const after = Number((url.searchParams.get('after') ?? '0').split('-')[0]);
      const waitMs = Math.min(Number(url.searchParams.get('wait_ms') ?? '0'), 30_000);
      const limit = Number(url.searchParams.get('limit') ?? '100');
      const pick = () =>
        (topics.get(topic) ?? []).filter((i) => Number(i.id.split('-')[0]) > after).slice(0, limit);
      polls.total += 1;
      polls.open += 1;
      polls.maxOpen = Math.max(polls.maxOpen, polls.open);
      try {
        let items = pick();
        if (items.length === 0 && waitMs > 0) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              wakers.delete(done);
              resolve();
            };
            const timer = setTimeout(done, waitMs);
            wakers.add(done);
            res.on('close', done);
          });
          items = pick();
        }
        return send(res, 200, {
          items,
          cursor: items.at(-1)?.id ?? (after === 0 ? '0' : `${after}-0`),
        });
      } finally {
        polls.open -= 1;
      }
    }
    return fail(res, 404, 'NOT_FOUND', 'no such route');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => fail(res, 500, 'INTERNAL', String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    submits,
    polls,
    published: (topic) => topics.get(topic) ?? [],
    refuseSubmits: (n, as = 'NO_AGENT') => {
      refusing = n;
      refusal = as;
    },
    loseReplies: (n, how) => {
      losing = n;
      loss = how;
    },
    deadLetterNext: (reason) => void (deadLetter = reason),
    publish,
    async close() {
      closed = true;
      for (const wake of [...wakers]) wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pump;
      await Promise.all([redis.quit(), reader.quit()]);
    },
  };
}
