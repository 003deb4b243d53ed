/**
 * The raw floor's worker: XREADGROUP COUNT 100, then for the batch one pipeline of receipt XADD,
 * XACK and completion XADD per entry. The pipeline goes out on a second connection and the next
 * read does not wait for it — the least a Streams worker can do per task.
 * Environment: REDIS_URL, CONSUMER.
 */
import { Redis } from 'ioredis';
import { monoMs } from '../../clock.ts';
import { announceReady, env, exitWithParent } from '../../load/child.ts';
import { FLOOR } from './shared.ts';

type GroupReply = [string, [string, string[]][]][] | null;

const url = env('REDIS_URL');
const name = env('CONSUMER');
const reader = new Redis(url, { maxRetriesPerRequest: null });
const writer = new Redis(url);
let closed = false;

const loop = (async () => {
  while (!closed) {
    let reply: GroupReply;
    try {
      reply = (await reader.xreadgroup(
        'GROUP',
        FLOOR.group,
        name,
        'COUNT',
        100,
        'BLOCK',
        1000,
        'STREAMS',
        FLOOR.tasks,
        '>',
      )) as GroupReply;
    } catch {
      if (!closed) await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) continue;
    const at = String(monoMs());
    const pipe = writer.pipeline();
    for (const [id, fields] of entries) {
      // fields: k <key> rs <completion stream>
      const key = fields[1] as string;
      pipe.xadd(FLOOR.receipts, '*', 'k', key);
      pipe.xack(FLOOR.tasks, FLOOR.group, id);
      pipe.xadd(fields[3] as string, '*', 'k', key, 'r', at);
    }
    pipe
      .exec()
      .catch((err: unknown) => process.stderr.write(`floor pipeline failed: ${String(err)}\n`));
  }
})();

exitWithParent(async () => {
  closed = true;
  reader.disconnect();
  await loop;
  await writer.quit();
});
await writer.ping();
announceReady();
