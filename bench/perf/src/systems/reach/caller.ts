/**
 * An Agent-Reach caller process: submits over HTTP (`POST /v1/tasks` with its own callback topic)
 * and reads every result from that topic with one long-poll loop (`GET /v1/callbacks/:topic`),
 * the way ReachClient does, here with undici so the client costs as little CPU as it can.
 *
 * Environment: ROUTER_URL, BENCH_CAPABILITY, SUBMIT_CONNECTIONS, HTTP_CONNECTIONS.
 */
import { Client, Pool } from 'undici';
import { env, envInt } from '../../load/child.ts';
import { serveCaller, type ResultSink } from '../../load/caller.ts';
import { RetryLater, type Target } from '../../load/loops.ts';

interface CallbackItem {
  task_id: string;
  status: 'completed' | 'failed' | 'dead';
  result?: unknown;
  error?: string;
}

const routerUrl = env('ROUTER_URL');
const capability = env('BENCH_CAPABILITY');
const topic = `bench-caller-${process.pid}`;
const POLL_WAIT_MS = 2000;

function submitTarget(pool: Pool): Target {
  return {
    async submit(key) {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/tasks',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task_id: key, capability, payload: { n: 1 }, callback_topic: topic }),
      });
      if (res.statusCode === 202 || res.statusCode === 200) {
        await res.body.dump();
        return;
      }
      const text = await res.body.text();
      // 429 AT_CAPACITY (every agent at max_concurrency), 503 NO_AGENT or STORE_UNAVAILABLE:
      // "retry shortly", which the SDK's run() does too.
      if (res.statusCode === 429 || res.statusCode === 503) throw new RetryLater(text);
      throw new Error(`router answered ${res.statusCode}: ${text.slice(0, 200)}`);
    },
  };
}

async function pollResults(client: Client, sink: ResultSink, isClosed: () => boolean): Promise<void> {
  let cursor = '0';
  while (!isClosed()) {
    try {
      const res = await client.request({
        method: 'GET',
        path: `/v1/callbacks/${topic}?after=${cursor}&wait_ms=${POLL_WAIT_MS}&limit=1000`,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const reply = (await res.body.json()) as { items: CallbackItem[]; cursor: string };
      cursor = reply.cursor;
      for (const item of reply.items) {
        if (item.status === 'completed') sink.complete(item.task_id, (item.result as { r?: number } | undefined)?.r ?? NaN);
        else sink.fail(item.task_id, new Error(`${item.status}: ${item.error ?? ''}`));
      }
    } catch (err: unknown) {
      if (isClosed()) return;
      process.stderr.write(`long-poll failed: ${err instanceof Error ? err.message : String(err)}\n`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

serveCaller(async (sink) => {
  const queuedPool = new Pool(routerUrl, { connections: envInt('SUBMIT_CONNECTIONS', 64), pipelining: 1 });
  const httpPool = new Pool(routerUrl, { connections: envInt('HTTP_CONNECTIONS', 50), pipelining: 1 });
  const poller = new Client(routerUrl, { headersTimeout: POLL_WAIT_MS + 10_000, bodyTimeout: POLL_WAIT_MS + 10_000 });
  let closed = false;
  const polling = pollResults(poller, sink, () => closed);
  return {
    queued: submitTarget(queuedPool),
    // A client that waits for its result: submit, then await it on the shared long-poll
    // (ReachClient.run), each of the 50 concurrent tasks holding one submit connection.
    http: submitTarget(httpPool),
    async close() {
      closed = true;
      await Promise.allSettled([queuedPool.destroy(), httpPool.destroy(), poller.destroy()]);
      await polling;
    },
  };
});
