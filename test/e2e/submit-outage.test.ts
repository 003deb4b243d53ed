/**
 * A 503 is not a refusal that never ran. Tasks are submitted while Redis is killed (SIGKILL, then
 * started again from its append-only file, `appendfsync always`) and while it is frozen (SIGSTOP
 * for 3 s, then SIGCONT): some submissions answered 503 or cut off reached Redis all the same.
 * Callers that follow docs/errors.md — send a 429, a 5xx or a lost submission again with the
 * same task_id — see every task run exactly once. Two such callers share the load: the
 * worker-sdk client (a task_id of its own, its retries, then `SubmitFailedError.taskId`) and
 * plain HTTP without a task_id (retrying with the task_id the error reply names). The agents'
 * handler counts its runs per task_id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { type CallbacksReply, type SubmitReply, type TaskView } from '@agent-reach/protocol';
import { startOwnRedis, waitFor, type OwnRedis } from '@agent-reach/testkit';
import {
  isSubmitFailedError,
  ReachClient,
  type ReachAgent,
  type TaskContext,
} from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { startStack, type Stack } from '../support/stack.ts';

const CAPABILITY = 'once';
const TOTAL = 300;
const IN_FLIGHT = 12;
const RATE_PER_S = 40;
/** Faults start once this many submissions were accepted, so that traffic is flowing. */
const KILL_AFTER = 60;
const FREEZE_AFTER = 170;
const KILL_DOWN_MS = 1000;
const FREEZE_MS = 3000;
/** A caller gives up on a submission after this long (counted, never silently). */
const GIVE_UP_MS = 20_000;
const FINAL = new Set(['completed', 'dead']);

let own: OwnRedis;
let stack: Stack;
let client: ReachClient;
const agents: ReachAgent[] = [];
/** Handler runs: task_id → attempts it ran at. */
const runs = new Map<string, number[]>();

beforeAll(async () => {
  own = await startOwnRedis({ persistent: true });
  stack = await startStack({
    redisUrl: own.url,
    // A claim that reached Redis and was never delivered is sent again after 3 s (not 10).
    env: { REACH_SNAPSHOT_MS: '500', REACH_DISPATCH_GRACE_MS: '3000' },
  });
  const handler = async (t: TaskContext): Promise<unknown> => {
    runs.set(t.taskId, [...(runs.get(t.taskId) ?? []), t.attempt]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    return t.payload;
  };
  for (const id of ['once-1', 'once-2', 'once-3'])
    agents.push(await startAgent(stack, id, [CAPABILITY], handler, { maxConcurrency: 16 }));
  client = new ReachClient({
    routerUrl: stack.routerUrl,
    requestTimeoutMs: 5000,
    submitMaxAttempts: 20,
    submitRetryTimeoutMs: 8000,
    submitRetry: { baseMs: 100, capMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
  await own?.stop();
}, 30_000);

/** One submission as its caller saw it. */
interface Submission {
  via: 'sdk' | 'http';
  /** The task_id the caller learned (from the reply, an error reply or SubmitFailedError). */
  taskId?: string;
  accepted: boolean;
}

/** Outcomes of the plain-HTTP callers' tries: `202`, `200`, `503:STORE_UNAVAILABLE`, `timeout`… */
const httpTries: Record<string, number> = {};
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The worker-sdk caller: submit() retries by itself; a SubmitFailedError is sent again with its task_id. */
async function viaSdk(i: number): Promise<Submission> {
  const sub: Submission = { via: 'sdk', accepted: false };
  const until = Date.now() + GIVE_UP_MS;
  while (Date.now() < until) {
    try {
      const reply = await client.submit({
        ...(sub.taskId === undefined ? {} : { task_id: sub.taskId }),
        capability: CAPABILITY,
        payload: { i },
      });
      return { ...sub, taskId: reply.task_id, accepted: true };
    } catch (err: unknown) {
      if (!isSubmitFailedError(err)) throw err;
      sub.taskId = err.taskId;
    }
  }
  return sub;
}

/**
 * The plain-HTTP caller: no task_id of its own. A 429 or 5xx reply names the task_id the router
 * made: every later try carries it. With no answer and no task_id yet it cannot retry safely
 * and stops (the docs tell such a caller to make its own task_id).
 */
async function viaHttp(i: number): Promise<Submission> {
  const sub: Submission = { via: 'http', accepted: false };
  const until = Date.now() + GIVE_UP_MS;
  for (let tries = 0; Date.now() < until; tries++) {
    let outcome: string;
    try {
      const res = await fetch(`${stack.routerUrl}/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          ...(sub.taskId === undefined ? {} : { task_id: sub.taskId }),
          capability: CAPABILITY,
          payload: { i },
        }),
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json()) as Partial<SubmitReply> & { error?: string };
      outcome = res.status >= 300 ? `${res.status}:${body.error ?? '?'}` : String(res.status);
      httpTries[outcome] = (httpTries[outcome] ?? 0) + 1;
      if (res.status === 200 || res.status === 202) {
        return { ...sub, taskId: body.task_id, accepted: true };
      }
      if (res.status !== 429 && res.status < 500) throw new Error(`refused: ${outcome}`);
      expect(body.task_id, `a ${outcome} reply names the task_id`).toBeTypeOf('string');
      if (sub.taskId !== undefined) expect(body.task_id).toBe(sub.taskId);
      sub.taskId = body.task_id;
    } catch (err: unknown) {
      if (!(err instanceof Error) || !['TimeoutError', 'TypeError'].includes(err.name)) throw err;
      httpTries['no answer'] = (httpTries['no answer'] ?? 0) + 1;
      if (sub.taskId === undefined) return sub;
    }
    await sleep(Math.min(1000, 100 * 2 ** tries));
  }
  return sub;
}

/** The acks stream's entries (id, fields) that name one of `taskIds`. */
async function acksOf(taskIds: string[]): Promise<[string, string[]][]> {
  const redis = new Redis(own.url);
  try {
    const entries = await redis.xrange(stack.keys.acks(), '-', '+');
    return entries.filter(([, fields]) => taskIds.some((id) => fields.includes(id)));
  } finally {
    await redis.quit();
  }
}

/** Every completion on a callback topic, read from the start. */
async function completionsOn(topic: string): Promise<Map<string, number>> {
  const count = new Map<string, number>();
  let after = '0';
  for (;;) {
    const res = await fetch(`${stack.routerUrl}/v1/callbacks/${topic}?after=${after}&limit=1000`);
    const page = (await res.json()) as CallbacksReply;
    for (const item of page.items)
      if (item.status === 'completed') count.set(item.task_id, (count.get(item.task_id) ?? 0) + 1);
    if (page.items.length === 0) return count;
    after = page.cursor;
  }
}

it('runs every accepted task exactly once for callers that retry with the same task_id through a Redis kill and a freeze', async () => {
  const submissions: Submission[] = [];
  let accepted = 0;
  const faults: string[] = [];
  const started = Date.now();
  const at = () => `+${((Date.now() - started) / 1000).toFixed(1)}s`;

  // Faults, each once enough traffic has been accepted.
  const chaos = (async () => {
    await waitFor(() => accepted >= KILL_AFTER, { timeoutMs: 30_000, intervalMs: 5 });
    own.kill('SIGKILL');
    await own.exited();
    faults.push(`${at()} SIGKILL`);
    await sleep(KILL_DOWN_MS); // the outage itself, not a wait for a condition
    await own.restart();
    faults.push(`${at()} restarted`);
    await waitFor(() => accepted >= FREEZE_AFTER, { timeoutMs: 30_000, intervalMs: 5 });
    own.kill('SIGSTOP');
    faults.push(`${at()} SIGSTOP`);
    await sleep(FREEZE_MS);
    own.kill('SIGCONT');
    faults.push(`${at()} SIGCONT`);
  })();

  // A bounded load: TOTAL submissions at RATE_PER_S, at most IN_FLIGHT at once, half each way.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < TOTAL) {
      const i = next++;
      const wait = started + (i * 1000) / RATE_PER_S - Date.now();
      if (wait > 0) await sleep(wait);
      const sub = await (i % 2 === 0 ? viaSdk(i) : viaHttp(i));
      submissions.push(sub);
      if (sub.accepted) accepted++;
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  } finally {
    // Whatever happened, Redis runs again before the checks and the cleanup.
    await chaos.catch(() => undefined);
    try {
      own.kill('SIGCONT');
    } catch {
      // not running: the checks below say what happened
    }
  }
  expect(faults).toHaveLength(4);

  // Every accepted task reaches a final state (completed, or dead with its reason).
  const ids = submissions.filter((s) => s.accepted).map((s) => s.taskId as string);
  const views = new Map<string, TaskView>();
  await waitFor(
    async () => {
      const open = ids.filter((id) => !FINAL.has(views.get(id)?.status ?? ''));
      for (const id of open) {
        const res = await fetch(`${stack.routerUrl}/v1/tasks/${id}`);
        if (res.status === 200) views.set(id, (await res.json()) as TaskView);
      }
      return ids.every((id) => FINAL.has(views.get(id)?.status ?? ''));
    },
    { timeoutMs: 25_000, intervalMs: 250, message: 'accepted tasks not final' },
  ).catch(() => undefined);

  const sdkCompletions = await completionsOn(client.callbackTopic);
  const twice = [...runs].filter(([, attempts]) => attempts.length > 1);
  const unknownRan = [...runs.keys()].filter((id) => !ids.includes(id));
  const notFinal = ids.filter((id) => !FINAL.has(views.get(id)?.status ?? ''));
  const dead = ids.filter((id) => views.get(id)?.status === 'dead');
  const metrics = await (await fetch(`${stack.routerUrl}/metrics`)).text();
  const existing = /reach_router_submits_total\{status="200",outcome="existing"[^}]*\} (\d+)/.exec(
    metrics,
  );
  console.log(
    `submit-outage: ${submissions.length} submissions, ${ids.length} accepted ` +
      `(${existing?.[1] ?? 0} of them by a retry that found its task already accepted), ` +
      `runs ${[...runs.values()].reduce((n, a) => n + a.length, 0)}, ran twice ${twice.length}, ` +
      `dead ${dead.length}; faults ${faults.join(', ')}; http tries ${JSON.stringify(httpTries)}`,
  );

  // What a user checks: every submission accepted, each task run once and completed once.
  expect(
    submissions.filter((s) => !s.accepted),
    'submissions never accepted',
  ).toEqual([]);
  expect(new Set(ids).size, 'one task per submission').toBe(TOTAL);
  expect(twice, 'tasks run twice (task_id, attempts)').toEqual([]);
  expect(unknownRan, 'tasks run that no caller knows of').toEqual([]);
  // For a task that is not final: its runs, its state, and the acks its agent left in the stream.
  const acks = notFinal.length === 0 ? [] : await acksOf(notFinal);
  expect(
    notFinal.map((id) => ({
      id,
      runs: runs.get(id),
      view: views.get(id),
      acks: acks.filter(([, fields]) => fields.includes(id)),
    })),
    'accepted tasks not final',
  ).toEqual([]);
  for (const id of dead) expect(views.get(id)?.dead_reason, `dead ${id}`).toBeTruthy();
  for (const id of ids.filter((x) => views.get(x)?.status === 'completed'))
    expect(runs.get(id), `completed ${id} ran once`).toHaveLength(1);
  for (const s of submissions.filter(
    (x) => x.via === 'sdk' && views.get(x.taskId ?? '')?.status === 'completed',
  ))
    expect(sdkCompletions.get(s.taskId as string), `one completion of ${s.taskId}`).toBe(1);
  // The outage was felt: the plain-HTTP callers saw 503s that named the task_id to retry with.
  // How many of those had reached Redis all the same (their retry answered 200 with the task) is
  // printed above and not asserted: it depends on where the freeze catches each request, and was
  // 0, 1 and 1 of 30 in three runs on this machine. e2e/idempotency.test.ts covers that 200
  // deterministically.
  expect(httpTries['503:STORE_UNAVAILABLE'] ?? 0).toBeGreaterThan(0);
}, 60_000);
