/**
 * Follows the chaos test's callback topics over HTTP (long polls, by cursor), falling over to the
 * next router when one is down, and reads a topic in full at the end.
 */
import type { CallbackItem, CallbacksReply } from '@agent-reach/protocol';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Reads one page of a topic; throws on anything but a 200. */
async function page(
  router: string,
  topic: string,
  after: string,
  waitMs: number,
): Promise<CallbacksReply> {
  const res = await fetch(
    `${router}/v1/callbacks/${topic}?after=${after}&wait_ms=${waitMs}&limit=1000`,
    {
      signal: AbortSignal.timeout(waitMs + 5000),
    },
  );
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`GET callbacks/${topic}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as CallbacksReply;
}

/** Every entry of `topic` from the start, through whichever router answers. */
export async function readTopic(
  routers: readonly string[],
  topic: string,
  deadlineMs = 30_000,
): Promise<CallbackItem[]> {
  const items: CallbackItem[] = [];
  const until = Date.now() + deadlineMs;
  let after = '0';
  for (let r = 0; ;) {
    try {
      const reply = await page(routers[r % routers.length] as string, topic, after, 0);
      items.push(...reply.items);
      if (reply.items.length === 0) return items;
      after = reply.cursor;
    } catch (err: unknown) {
      if (Date.now() > until) throw err;
      r++;
      await sleep(200);
    }
  }
}

/** Long-polls every topic and keeps what arrives, with the time it was seen. */
export class CallbackWatcher {
  /** task_id → final items seen for it (in order). */
  readonly byTask = new Map<string, CallbackItem[]>();
  /** Failed long polls, by router failover. */
  failovers = 0;
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly routers: readonly string[],
    private readonly topics: readonly string[],
  ) {}

  start(): void {
    this.loops = this.topics.map((topic, i) => this.follow(topic, i));
  }

  /** Stops the long polls (each ends at its current wait). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** True when a final item (completed, dead or cancelled) for `taskId` has arrived. */
  isFinal(taskId: string): boolean {
    return (this.byTask.get(taskId) ?? []).some(
      (x) => x.status === 'completed' || x.status === 'dead' || x.status === 'cancelled',
    );
  }

  private async follow(topic: string, offset: number): Promise<void> {
    let after = '0';
    let r = offset;
    while (!this.stopped) {
      try {
        const reply = await page(
          this.routers[r % this.routers.length] as string,
          topic,
          after,
          1000,
        );
        for (const item of reply.items) {
          const list = this.byTask.get(item.task_id) ?? [];
          list.push(item);
          this.byTask.set(item.task_id, list);
        }
        after = reply.cursor;
      } catch {
        this.failovers++;
        r++;
        await sleep(200);
      }
    }
  }
}
