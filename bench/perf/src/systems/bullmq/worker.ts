/**
 * A BullMQ worker process with a no-op processor that returns when it started the job.
 * Environment: REDIS_URL, CONCURRENCY.
 */
import { Worker } from 'bullmq';
import { monoMs } from '../../clock.ts';
import { announceReady, envInt, exitWithParent } from '../../load/child.ts';
import { connection, QUEUE, type BenchReturn } from './shared.ts';

const worker = new Worker<{ k: string }, BenchReturn>(
  QUEUE,
  (job) => Promise.resolve({ k: job.data.k, r: monoMs() }),
  {
    connection: connection(),
    concurrency: envInt('CONCURRENCY', 100),
  },
);
worker.on('error', (err) => process.stderr.write(`bullmq worker error: ${err.message}\n`));
exitWithParent(() => worker.close());
void worker.waitUntilReady().then(() => announceReady());
