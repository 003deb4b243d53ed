/**
 * The archiver's CPU per task, alone: N dead-on-arrival tasks (a 70-byte payload) are made final
 * with archiving on (reject-3.lua, into the outbox), then archive passes run until the outbox is
 * empty, writing to InfluxDB; the process's CPU time over the passes (reading the tasks,
 * building the points, the write, archive-done-n.lua's call, and ioredis parsing the replies) is
 * divided by the tasks archived. Needs a Redis and an InfluxDB 1.x of its own:
 *
 *   REDIS_URL=redis://127.0.0.1:16399 INFLUX_URL=http://127.0.0.1:19086 \
 *     node --import tsx apps/registry-sync/src/archive/measure-cpu.ts [N]
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import { defineDispatchCommands, rejectScript } from '@agent-reach/dispatch';
import { ensureDatabase } from '@agent-reach/events';
import { loadScripts } from '@agent-reach/service-kit';
import { archiveDoneScript } from '../commands/archive-done.ts';
import { TaskArchiver } from './task-archiver.ts';

const N = Number(process.argv[2] ?? 5000);
const redisUrl = process.env.REDIS_URL;
const influxUrl = process.env.INFLUX_URL;
if (!redisUrl || !influxUrl) throw new Error('set REDIS_URL and INFLUX_URL');

const redis = new Redis(redisUrl);
const keys = reachKeys(`archive-cpu-${Date.now().toString(36)}`);
defineDispatchCommands(redis, ['reject']);
loadScripts(redis, [archiveDoneScript]);
await ensureDatabase(influxUrl, 'archive_cpu');
const made: Promise<boolean>[] = [];
for (let i = 0; i < N; i++) {
  const taskId = `t-${i}`;
  made.push(
    rejectScript.run(redis, {
      keys: {
        task: keys.task(taskId),
        timeline: keys.timeline(taskId),
        outbox: keys.archiveOutbox(0),
      },
      args: {
        taskId,
        capability: 'echo',
        payload: JSON.stringify({ text: `summarise document ${i} of the quarterly report` }),
        callbackTopic: '',
        traceId: '0123456789abcdef0123456789abcdef',
        reason: 'loop',
        retentionS: 600,
        archive: '1',
      },
      items: [],
    }),
  );
}
await Promise.all(made);
const archiver = new TaskArchiver({
  redis,
  keys,
  target: { url: influxUrl, db: 'archive_cpu' },
  settings: {
    archiveBatch: 500,
    archiveTombstoneDays: 30,
    taskRetentionS: 600,
    dlqRetentionS: 600,
    archivePayloads: true,
    archivePayloadsByCapability: {},
    archiveMaxValueBytes: 32_768,
  },
  logger: pino({ level: 'silent' }),
});
const cpu = process.cpuUsage();
const started = Date.now();
let archived = 0;
for (;;) {
  const pass = await archiver.pass();
  archived += pass.archived;
  if (pass.blocked) throw new Error('InfluxDB did not take the batch');
  if (!pass.more && (await archiver.depth()) === 0) break;
}
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${archived} tasks archived in ${Date.now() - started} ms: ` +
    `${((used.user + used.system) / archived).toFixed(1)} µs CPU a task\n`,
);
await redis.quit();
