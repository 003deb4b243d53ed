import { Redis } from 'ioredis';

/**
 * Keys of the raw Redis Streams floor: one task stream read by a consumer group, a receipts
 * stream, and one completion stream per producer (named in each task entry).
 */
export const FLOOR = {
  tasks: 'floor:tasks',
  group: 'g',
  receipts: 'floor:receipts',
  done: (producer: string) => `floor:done:${producer}`,
} as const;

/**
 * Follows a completion stream (XREAD BLOCK on its own connection) and hands each entry's task key
 * and receipt time to `onDone`, until `close()`.
 */
export function followCompletions(
  redisUrl: string,
  stream: string,
  onDone: (key: string, receivedAt: number) => void,
): { close(): Promise<void> } {
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
  let closed = false;
  const loop = (async () => {
    // The stream is new (named after this process), so reading from the start misses nothing.
    let last = '0';
    while (!closed) {
      try {
        const reply = await conn.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', stream, last);
        for (const [id, fields] of reply?.[0]?.[1] ?? []) {
          last = id;
          onDone(fields[1] as string, Number(fields[3]));
        }
      } catch {
        if (!closed) await new Promise((r) => setTimeout(r, 100));
      }
    }
  })();
  return {
    async close() {
      closed = true;
      conn.disconnect();
      await loop;
    },
  };
}
