/**
 * An Agent-Reach caller process, with undici so the client costs as little CPU as it can.
 * flood and paced: the submissions of one tick go together in `POST /v1/tasks/batch` (each with
 * the caller's own callback topic), and one long-poll loop reads every result from that topic
 * (`GET /v1/callbacks/:topic`), the way ReachClient does. http: each of the concurrent clients
 * submits one `POST /v1/tasks` and waits for its result from the shared long-poll before the
 * next (ReachClient.run()); with REACH_HTTP_STYLE=wait, one `POST /v1/tasks?wait_ms=` per task
 * that answers with the result instead.
 *
 * Environment: REACH_ROUTER_URL, BENCH_CAPABILITY (one, or several comma-separated: the tasks go to each
 * in turn), SUBMIT_CONNECTIONS, HTTP_CONNECTIONS, SUBMIT_BATCH,
 * CALLBACK_TOPIC (default `bench-caller-<pid>`), REACH_HTTP_STYLE (poll | wait), REACH_KEY (sent as a bearer key when set: the reach-auth system).
 */
import { Client, Pool } from 'undici';
import { env, envInt } from '../../load/child.ts';
import { serveCaller, type ResultSink } from '../../load/caller.ts';
import { RetryLater, type Target } from '../../load/loops.ts';
import { benchTask, submitBatchTarget } from '../../load/submit-batch.ts';
import { hopsOf, type StartMarks } from './hops.ts';

interface CallbackItem {
  /** The callback entry's id: when registry-sync published it. */
  id: string;
  task_id: string;
  /** The ack entry's id, in ms: when the agent acknowledged the task. */
  completed_at: number;
  status: 'completed' | 'failed' | 'dead';
  result?: unknown;
  error?: string;
}

const routerUrl = env('REACH_ROUTER_URL');
const capabilities = env('BENCH_CAPABILITY').split(',');
let sent = 0;
/** The next capability, each in turn. */
const nextCapability = () => capabilities[sent++ % capabilities.length] as string;
const topic = process.env['CALLBACK_TOPIC'] || `bench-caller-${process.pid}`;
const POLL_WAIT_MS = 2000;
const WAIT_MS = 30_000;
/** A caller key when the router requires keys (the reach-auth system), else no header. */
const key = process.env['REACH_KEY'];
const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
const jsonHeaders = { 'content-type': 'application/json', ...auth };

/** When each task outstanding was written into a request (epoch ms): the first of its hops. */
const submittedAt = new Map<string, number>();
const taskBody = (key: string) => {
  submittedAt.set(key, Date.now());
  return benchTask(key, nextCapability(), topic);
};

/** Submit (202); the result comes from the shared long-poll, as with ReachClient.run(). */
function pollStyleTarget(pool: Pool): Target {
  return {
    async submit(key) {
      const res = await pool.request({
        method: 'POST',
        path: '/v1/tasks',
        headers: jsonHeaders,
        body: JSON.stringify(taskBody(key)),
      });
      const text = await res.body.text();
      if (res.statusCode === 202 || res.statusCode === 200) return;
      if (res.statusCode === 429 || res.statusCode === 503) throw new RetryLater(text);
      throw new Error(`router answered ${res.statusCode}: ${text.slice(0, 200)}`);
    },
  };
}

/** One request per task that answers with its result (`?wait_ms=`), as ReachClient.run() does. */
function waitTarget(pool: Pool, sink: ResultSink): Target {
  return {
    async submit(key) {
      const res = await pool.request({
        method: 'POST',
        path: `/v1/tasks?wait_ms=${WAIT_MS}`,
        headers: jsonHeaders,
        body: JSON.stringify({ task_id: key, capability: nextCapability(), payload: { n: 1 } }),
      });
      const text = await res.body.text();
      if (res.statusCode === 200) {
        const reply = JSON.parse(text) as {
          status: string;
          result?: { r?: number };
          error?: string;
        };
        if (reply.status === 'completed') sink.complete(key, reply.result?.r ?? NaN);
        else sink.fail(key, new Error(`${reply.status}: ${reply.error ?? ''}`));
        return;
      }
      if (res.statusCode === 429 || res.statusCode === 503) throw new RetryLater(text);
      throw new Error(`router answered ${res.statusCode}: ${text.slice(0, 200)}`);
    },
  };
}

async function pollResults(
  client: Client,
  sink: ResultSink,
  isClosed: () => boolean,
): Promise<void> {
  let cursor = '0';
  while (!isClosed()) {
    try {
      const res = await client.request({
        method: 'GET',
        path: `/v1/callbacks/${topic}?after=${cursor}&wait_ms=${POLL_WAIT_MS}&limit=1000`,
        headers: auth,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const reply = (await res.body.json()) as { items: CallbackItem[]; cursor: string };
      cursor = reply.cursor;
      const heldAt = Date.now();
      for (const item of reply.items) {
        const submitted = submittedAt.get(item.task_id) ?? NaN;
        submittedAt.delete(item.task_id);
        if (item.status !== 'completed') {
          sink.fail(item.task_id, new Error(`${item.status}: ${item.error ?? ''}`));
          continue;
        }
        const result = item.result as ({ r?: number } & StartMarks) | undefined;
        const hops = hopsOf({
          submittedAt: submitted,
          sentId: result?.m ?? '',
          startedAt: result?.e ?? NaN,
          ackedAt: item.completed_at,
          publishedId: item.id,
          heldAt,
        });
        sink.complete(item.task_id, result?.r ?? NaN, hops);
      }
    } catch (err: unknown) {
      if (isClosed()) return;
      process.stderr.write(
        `long-poll failed: ${err instanceof Error ? err.message : String(err)}\n`,
      );
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

serveCaller(async (sink) => {
  const queuedPool = new Pool(routerUrl, {
    connections: envInt('SUBMIT_CONNECTIONS', 64),
    pipelining: 1,
  });
  const httpPool = new Pool(routerUrl, {
    connections: envInt('HTTP_CONNECTIONS', 50),
    pipelining: 1,
  });
  const poller = new Client(routerUrl, {
    headersTimeout: POLL_WAIT_MS + 10_000,
    bodyTimeout: POLL_WAIT_MS + 10_000,
  });
  let closed = false;
  const polling = pollResults(poller, sink, () => closed);
  // Submissions of one tick in one `POST /v1/tasks/batch`; results come from the long-poll.
  const queued = submitBatchTarget({
    pool: queuedPool,
    maxBatch: envInt('SUBMIT_BATCH', 256),
    headers: jsonHeaders,
    taskBody,
  });
  return {
    queued,
    requestsSent: queued.requestsSent,
    // A client that waits for its result, each of the 50 concurrent tasks holding a connection.
    http:
      process.env['REACH_HTTP_STYLE'] === 'wait'
        ? waitTarget(httpPool, sink)
        : pollStyleTarget(httpPool),
    async close() {
      closed = true;
      await Promise.allSettled([queuedPool.destroy(), httpPool.destroy(), poller.destroy()]);
      await polling;
    },
  };
});
