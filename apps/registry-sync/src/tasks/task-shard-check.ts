import { isCluster, type RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  FINAL_TASK_STATUSES,
  PUBLISHED_SETTINGS,
  type ReachKeys,
  type TaskStatus,
} from '@agent-reach/protocol';

/** What {@link checkTaskShards} reads. */
export interface TaskShardCheckOptions {
  redis: RedisClient;
  keys: Pick<ReachKeys, 'prefix' | 'settings' | 'taskShards' | 'task'>;
  logger: Logger;
}

/** Task hashes found by one scan: those not final yet, those final (kept for their retention). */
interface Found {
  live: number;
  final: number;
  /** One task_id not final yet, for the error. */
  example?: string;
}

const ENV = PUBLISHED_SETTINGS.taskShards;

/**
 * Refuses to start registry-sync with a task shard count (`REACH_TASK_SHARDS`) under which the
 * tasks in flight could not be found: a task's keys live under its shard's hash tag, so the count
 * may change only while no task is in flight. Also refuses a store holding tasks in flight under
 * the former key layout (`<prefix>:{t:<task_id>}`), which this version does not read
 * (docs/DEPLOY.md, Upgrading to task shards). Finished tasks under another layout are only
 * warned about: they expire with their retention and are no longer shown.
 *
 * The count stored with the published settings is the one the tasks were written under: when it
 * equals this registry-sync's, nothing is scanned. Otherwise (a first start on this store, or a
 * new count) the task hashes are scanned once, on every master of a Cluster.
 */
export async function checkTaskShards(o: TaskShardCheckOptions): Promise<void> {
  const { redis, keys, logger } = o;
  const count = keys.taskShards();
  const stored = await redis.hget(keys.settings(), ENV);
  if (stored !== null && Number(stored) === count) return;
  const log = logger.child({ module: 'task-shards' });
  const p = keys.prefix;
  const former = await scanTasks(redis, `${p}:{t:*}`, (key) => key.slice(p.length + 4, -1));
  // A key of the current layout whose tag is not the one this count gives its task.
  const moved = await scanTasks(redis, `${p}:{ts:*}:h:*`, (key) => {
    const id = key.slice(key.indexOf('}:h:') + 4);
    return keys.task(id) === key ? undefined : id;
  });
  const drain = (what: string, f: Found) =>
    new Error(
      `settings: ${f.live} task(s) in flight (e.g. ${JSON.stringify(f.example)}) are kept ${what}; ` +
        `registry-sync with ${ENV}=${count} cannot find them. Drain first — stop submitting and ` +
        `let them finish with the registry-sync and routers that wrote them — or start with ` +
        `${ENV}=${stored ?? 'the count they were written with'} (docs/DEPLOY.md, Upgrading to task shards)`,
    );
  if (former.live > 0) throw drain('under the former key layout ({t:<task_id>})', former);
  if (moved.live > 0) throw drain(`under ${stored ?? 'another number of'} task shards`, moved);
  const finished = former.final + moved.final;
  if (finished > 0) {
    log.warn(
      { finished, task_shards: count, stored: stored ?? undefined },
      `${finished} finished task(s) were written under another key layout or ${ENV}; they are no longer shown and expire with their retention`,
    );
  }
  if (stored !== null)
    log.info({ from: Number(stored), to: count }, `${ENV} changed; no task was in flight`);
}

/**
 * Scans every master for keys matching `match`; `idOf` gives the task_id of a key to count, or
 * undefined to skip it. Each task found is read for its status (a hash without one is skipped).
 */
async function scanTasks(
  redis: RedisClient,
  match: string,
  idOf: (key: string) => string | undefined,
): Promise<Found> {
  const found: Found = { live: 0, final: 0 };
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      const hashes = batch.filter((key) => idOf(key) !== undefined);
      if (hashes.length === 0) continue;
      const pipe = node.pipeline();
      for (const key of hashes) pipe.hget(key, 'status');
      const replies = (await pipe.exec()) ?? [];
      replies.forEach(([err, status], i) => {
        if (err || typeof status !== 'string') return;
        if (FINAL_TASK_STATUSES.includes(status as TaskStatus)) found.final++;
        else {
          found.live++;
          found.example ??= idOf(hashes[i] as string);
        }
      });
    } while (cursor !== '0');
  }
  return found;
}
