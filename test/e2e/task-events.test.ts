/**
 * Progress and streamed output: an agent streams 500 chunks with ctx.stream() (and progress with
 * ctx.progress()); a follower of GET /v1/tasks/:id/events gets every chunk in order across a
 * reconnect with Last-Event-ID, the stream ends after the final stage, and a finished task's
 * stream replays the same events. With `stream: true` the callback topic gets the progress and
 * chunks before the one final item. Past REACH_STREAM_MAX_CHUNKS the output is cut with one
 * `truncated` event and the task still completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ReachClient, type ReachAgent, type TaskEventMessage } from '@agent-reach/worker-sdk';
import { runCli } from '@agent-reach/cli';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let client: ReachClient;
const agents: ReachAgent[] = [];
/** Opened by the test while the streaming task waits half-way. */
const gates = new Map<string, () => void>();
const gateOpened = new Map<string, Promise<void>>();

const MAX_CHUNKS = 1000;

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_STREAM_MAX_CHUNKS: String(MAX_CHUNKS) },
  });
  client = new ReachClient({ routerUrl: stack.routerUrl, callbackTopic: 'streamed' });
  agents.push(
    await startAgent(stack, 'streamer-1', ['stream'], async (t) => {
      const {
        chunks,
        gate,
        every = 25,
        pauseMs = 2,
        silent,
      } = t.payload as {
        chunks: number;
        gate?: boolean;
        every?: number;
        pauseMs?: number;
        /** The same loop without output (a baseline). */
        silent?: boolean;
      };
      for (let i = 0; i < chunks; i++) {
        if (!silent) t.stream(`c${i}`);
        if (!silent && i % 100 === 99) t.progress({ done: i + 1, of: chunks });
        // Half-way, wait for the test; elsewhere a pause now and then, so chunks leave in several acks.
        if (gate && i === chunks / 2 - 1) await gateOpened.get(t.taskId);
        else if (every > 0 && i % every === every - 1)
          await new Promise((r) => setTimeout(r, pauseMs));
      }
      return { chunks };
    }),
    // A batch agent: its tasks wait in the capability's pool until it pulls them.
    await startAgent(
      stack,
      'pool-streamer-1',
      ['stream-pool'],
      async (t) => {
        const { chunks } = t.payload as { chunks: number };
        for (let i = 0; i < chunks; i++) t.stream(`c${i}`);
        t.progress({ done: chunks, of: chunks });
        return { chunks };
      },
      { channel: 'pull' },
    ),
  );
});

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

type Sse = { id: string; event: string; data: Record<string, unknown> };

/** Reads an event stream until it ends or `stopAfter` says so (then the connection is dropped). */
async function readSse(
  taskId: string,
  lastEventId?: string,
  stopAfter?: (events: Sse[]) => boolean,
): Promise<{ events: Sse[]; ended: boolean; status: number }> {
  const abort = new AbortController();
  const res = await fetch(`${stack.routerUrl}/v1/tasks/${taskId}/events`, {
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    signal: abort.signal,
  });
  const events: Sse[] = [];
  if (res.status !== 200 || !res.body) return { events, ended: true, status: res.status };
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(bytes, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const f: Record<string, string> = {};
        for (const line of block.split('\n')) {
          const c = line.indexOf(': ');
          if (c > 0) f[line.slice(0, c)] = line.slice(c + 2);
        }
        if (f.id === undefined || f.event === undefined || f.data === undefined) continue;
        events.push({ id: f.id, event: f.event, data: JSON.parse(f.data) as Sse['data'] });
        if (stopAfter?.(events)) {
          abort.abort();
          return { events, ended: false, status: 200 };
        }
      }
    }
  } catch (err: unknown) {
    if (!abort.signal.aborted) throw err;
  }
  return { events, ended: !abort.signal.aborted, status: 200 };
}

const chunksOf = (events: readonly { event: string; data: Record<string, unknown> }[]) =>
  events.filter((e) => e.event === 'chunk').map((e) => e.data.chunk as string);
const expected = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);

describe('progress and streamed output', () => {
  it('a follower gets 500 chunks in order across a reconnect with Last-Event-ID, then the final stage; a finished task replays them', async () => {
    const taskId = `stream-${Date.now()}`;
    gateOpened.set(taskId, new Promise((r) => gates.set(taskId, () => r())));
    const sub = await client.submit({
      task_id: taskId,
      capability: 'stream',
      payload: { chunks: 500, gate: true },
      stream: true,
    });
    expect(sub.task_id).toBe(taskId);
    const t0 = performance.now();
    // First connection: dropped after 200 chunks (the task is waiting at 250).
    const first = await readSse(taskId, undefined, (ev) => chunksOf(ev).length === 200);
    expect(first.ended).toBe(false);
    const lastId = first.events[first.events.length - 1]?.id as string;
    // Reconnect after the last event seen; the task goes on only now, so the rest comes live.
    const resumed = readSse(taskId, lastId);
    gates.get(taskId)?.();
    const second = await resumed;
    const ms = performance.now() - t0;
    expect(second.ended).toBe(true);
    const all = [...first.events, ...second.events];
    expect(chunksOf(all)).toEqual(expected(500));
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    const stages = all.filter((e) => e.event === 'stage').map((e) => e.data.stage);
    expect(stages).toEqual(['accepted', 'sent', 'received', 'streaming', 'completed']);
    expect(all[all.length - 1]?.data.stage).toBe('completed');
    const progress = all.filter((e) => e.event === 'progress').map((e) => e.data.progress);
    expect(progress.at(-1)).toEqual({ done: 500, of: 500 });
    // Every chunk comes after the receipt and before the completion.
    const at = (stage: string) => all.findIndex((e) => e.data.stage === stage);
    const chunkIdx = all.map((e, i) => (e.event === 'chunk' ? i : -1)).filter((i) => i >= 0);
    expect(Math.min(...chunkIdx)).toBeGreaterThan(at('received'));
    expect(Math.max(...chunkIdx)).toBeLessThan(at('completed'));
    console.log(
      `[task-events] 500 chunks followed live with one reconnect: ${all.length} events in ${Math.round(ms)} ms`,
    );

    // A finished task's stream replays the same events, through the SDK's follower, and ends.
    const replay: TaskEventMessage[] = [];
    for await (const e of client.events(taskId)) replay.push(e);
    expect(replay.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(chunksOf(replay)).toEqual(expected(500));

    // The callback topic: progress and chunks first (stream: true), then the one final item.
    const items = (
      await http<{ items: { task_id: string; status: string; chunk?: string }[] }>(
        `${stack.routerUrl}/v1/callbacks/streamed?limit=1000`,
      )
    ).body.items.filter((i) => i.task_id === taskId);
    expect(items.filter((i) => i.status === 'chunk').map((i) => i.chunk)).toEqual(expected(500));
    expect(items.filter((i) => i.status === 'progress')).toHaveLength(5);
    expect(items.filter((i) => i.status === 'completed')).toHaveLength(1);
    expect(items[items.length - 1]?.status).toBe('completed');
    // The SDK's result() waits for the final item, not the first one on the topic.
    const result = await client.result(taskId, { timeoutMs: 5000 });
    expect(result.status).toBe('completed');
  });

  it('a pooled task with stream: true puts its progress and chunks on its callback topic, and its view names its pool', async () => {
    const sub = await client.submit({
      capability: 'stream-pool',
      payload: { chunks: 20 },
      stream: true,
    });
    expect(sub.stream).toBe(`${stack.prefix}:{pool:stream-pool}`);
    const result = await client.result(sub.task_id, { timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: 'completed', agent_id: 'pool-streamer-1' });
    const items = (
      await http<{ items: { task_id: string; status: string; chunk?: string }[] }>(
        `${stack.routerUrl}/v1/callbacks/streamed?limit=1000`,
      )
    ).body.items.filter((i) => i.task_id === sub.task_id);
    expect(items.filter((i) => i.status === 'chunk').map((i) => i.chunk)).toEqual(expected(20));
    expect(items.filter((i) => i.status === 'progress')).toHaveLength(1);
    expect(items.at(-1)?.status).toBe('completed');
  });

  it(`cuts the output at REACH_STREAM_MAX_CHUNKS (${MAX_CHUNKS}) with one truncated event; the task completes`, async () => {
    const sub = await client.submit({ capability: 'stream', payload: { chunks: 1500 } });
    const events: TaskEventMessage[] = [];
    for await (const e of client.events(sub.task_id)) events.push(e);
    const truncated = events.filter((e) => e.event === 'truncated');
    expect(truncated).toHaveLength(1);
    // Progress values count toward the bound too: 1000 entries in all.
    const kept = events.filter((e) => e.event === 'chunk' || e.event === 'progress');
    expect(kept).toHaveLength(MAX_CHUNKS);
    expect(chunksOf(events)).toEqual(expected(chunksOf(events).length));
    expect(events[events.length - 1]?.data).toMatchObject({ stage: 'completed' });
    const view = await http<{ status: string; timeline: { stage: string }[] }>(
      `${stack.routerUrl}/v1/tasks/${sub.task_id}`,
    );
    expect(view.body.status).toBe('completed');
    const stages = view.body.timeline.map((e) => e.stage);
    expect(stages.filter((s) => s === 'streaming')).toHaveLength(1);
    expect(stages.filter((s) => s === 'truncated')).toHaveLength(1);
  });

  it('reach follow <task_id> prints the output chunks on stdout and the stages on stderr', async () => {
    const sub = await client.submit({ capability: 'stream', payload: { chunks: 50 } });
    let out = '';
    let err = '';
    const code = await runCli(['follow', sub.task_id, '--router', stack.routerUrl], {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      env: {},
      stderrIsTTY: false,
    });
    expect(code).toBe(0);
    expect(out).toBe(expected(50).join(''));
    expect(err).toMatch(/\[received /);
    expect(err).toMatch(/\[completed /);
  });

  it('overhead per chunk: Redis commands and time (printed)', async () => {
    // Figures for docs/PROTOCOL.md, against the same loop without output run just before.
    // Redis counts the commands scripts run in INFO commandstats too; XADD and EVALSHA are the
    // ones output adds (the agent's ack, registry-sync's output-3.lua and its XADD per chunk).
    // One Redis's counters: on the cluster leg the task's commands land on several nodes.
    if (stack.redisClusterNodes) return;
    const redis = new Redis(stack.redisUrl);
    const stats = async () => {
      const text = await redis.info('commandstats');
      const of = (cmd: string) => {
        const m = new RegExp(`cmdstat_${cmd}:calls=(\\d+),usec=(\\d+)`).exec(text);
        return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
      };
      return { xadd: of('xadd'), evalsha: of('evalsha') };
    };
    const run = async (payload: Record<string, unknown>) => {
      const before = await stats();
      const sub = await client.submit({ capability: 'stream', payload });
      await client.result(sub.task_id, { timeoutMs: 60_000 });
      const after = await stats();
      const view = (
        await http<{ timeline: { stage: string; at: number }[] }>(
          `${stack.routerUrl}/v1/tasks/${sub.task_id}`,
        )
      ).body;
      const at = (stage: string) => view.timeline.find((e) => e.stage === stage)?.at ?? NaN;
      return {
        xadd: after.xadd.calls - before.xadd.calls,
        evalsha: after.evalsha.calls - before.evalsha.calls,
        usec: after.xadd.usec - before.xadd.usec + after.evalsha.usec - before.evalsha.usec,
        spanMs: at('completed') - at('received'),
      };
    };
    type Run = Awaited<ReturnType<typeof run>>;
    const line = (what: string, n: number, none: Run, some: Run) =>
      `[task-events] ${what}, per chunk: ${((some.xadd - none.xadd) / n).toFixed(3)} XADD, ` +
      `${((some.evalsha - none.evalsha) / n).toFixed(3)} EVALSHA, ` +
      `${((some.usec - none.usec) / n).toFixed(2)} µs of Redis time in them, ` +
      `${((some.spanMs - none.spanMs) / n).toFixed(3)} ms more from receipt to completion ` +
      `(without output ${JSON.stringify(none)}; with ${JSON.stringify(some)})`;
    try {
      await run({ chunks: 0 });
      // As fast as a handler can call stream(): chunks leave in acks of up to 1,000 (within the
      // bound of this stack, REACH_STREAM_MAX_CHUNKS 1,000 with the 9 progress values).
      const N = 900;
      const none = await run({ chunks: N, every: 0, silent: true });
      const burst = await run({ chunks: N, every: 0 });
      // A chunk every 30 ms (past the 20 ms linger): each chunk its own ack.
      const M = 100;
      const idle = await run({ chunks: M, every: 1, pauseMs: 30, silent: true });
      const spaced = await run({ chunks: M, every: 1, pauseMs: 30 });
      console.log(line(`${N} chunks in a burst`, N, none, burst));
      console.log(line(`${M} chunks 30 ms apart (an ack each)`, M, idle, spaced));
      expect(burst.xadd - none.xadd).toBeGreaterThanOrEqual(N);
    } finally {
      await redis.quit();
    }
  });

  it('a task that streams nothing: its stages, then the end; an unknown task is 404', async () => {
    const sub = await client.submit({ capability: 'stream', payload: { chunks: 0 } });
    await waitFor(
      async () =>
        (await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/${sub.task_id}`)).body
          .status === 'completed',
    );
    const { events, ended } = await readSse(sub.task_id);
    expect(ended).toBe(true);
    expect(events.map((e) => e.data.stage)).toEqual(['accepted', 'sent', 'received', 'completed']);
    const missing = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks/nope-404/events`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('TASK_NOT_FOUND');
    const bad = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks/${sub.task_id}/events`, {
      headers: { 'last-event-id': 'not-an-id' },
    });
    expect(bad.status).toBe(400);
  });
});
