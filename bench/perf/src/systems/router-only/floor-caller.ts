/**
 * The caller of the router floor (`--modes router-only`): the same `POST /v1/tasks/batch` bodies
 * the reach caller sends the router, each task done once the floor accepted it (the floor has
 * nothing behind it to wait for). Each run may cap the tasks per request (`maxBatch`): the
 * session holds it to the router's, whose batches are cut by results arriving in pages.
 *
 * Environment: FLOOR_URL, BENCH_CAPABILITY, SUBMIT_CONNECTIONS, SUBMIT_BATCH, CALLBACK_TOPIC.
 */
import { Pool } from 'undici';
import { env, envInt } from '../../load/child.ts';
import { serveCaller } from '../../load/caller.ts';
import { benchTask, submitBatchTarget } from '../../load/submit-batch.ts';

serveCaller(async (sink) => {
  const capability = env('BENCH_CAPABILITY');
  const topic = env('CALLBACK_TOPIC');
  const pool = new Pool(env('FLOOR_URL'), {
    connections: envInt('SUBMIT_CONNECTIONS', 64),
    pipelining: 1,
  });
  const batch = submitBatchTarget({
    pool,
    maxBatch: envInt('SUBMIT_BATCH', 256),
    headers: { 'content-type': 'application/json' },
    taskBody: (key) => benchTask(key, capability, topic),
  });
  const unused = {
    submit: () => Promise.reject(new Error('the router floor runs floods only')),
  };
  return {
    queued: {
      async submit(key) {
        await batch.submit(key);
        sink.complete(key, NaN);
      },
    },
    http: unused,
    requestsSent: batch.requestsSent,
    limitBatch: batch.limitBatch,
    close: () => pool.destroy(),
  };
});
