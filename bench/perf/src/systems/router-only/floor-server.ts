/**
 * The router floor of `--modes router-only`: the least a fastify service that takes Agent-Reach's
 * submissions can do. `POST /v1/tasks/batch` with the router's own body and reply schemas and Ajv
 * settings (the body parsed and validated, the reply serialised as the router's is), then one
 * XADD per task of the same fields an inbox entry carries, on an auto-pipelined connection (the
 * XADDs of one request leave in one write), and every item answered 202. No routing, no task
 * state, no results: the router's CPU per task over this one is what Agent-Reach adds.
 *
 * Environment: REDIS_URL, FLOOR_PORT.
 */
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import {
  encodeTask,
  ROUTES,
  SubmitBatchBody,
  SubmitBatchReply,
  type SubmitBatchItem,
} from '@agent-reach/protocol';
import { announceReady, env, envInt, exitWithParent } from '../../load/child.ts';
import { ROUTER_FLOOR_STREAM } from './shared.ts';

const redis = new Redis(env('REDIS_URL'), { enableAutoPipelining: true });
const app = Fastify({
  logger: false,
  // As the services' baseFastifyOptions: unknown properties kept (and refused by the schema).
  ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true } },
});

app.post<{ Body: SubmitBatchBody }>(
  ROUTES.submitBatch,
  { schema: { body: SubmitBatchBody, response: { 200: SubmitBatchReply } } },
  async (request) => {
    const results = await Promise.all(
      request.body.tasks.map(async (task): Promise<SubmitBatchItem> => {
        const taskId = task.task_id ?? '';
        await redis.xadd(
          ROUTER_FLOOR_STREAM,
          '*',
          ...encodeTask({
            task_id: taskId,
            capability: task.capability,
            payload: JSON.stringify(task.payload ?? null),
            attempt: 1,
            trace_id: '',
            callback_topic: task.callback_topic ?? '',
            deadline_ms: 0,
          }),
        );
        return { http_status: 202, task_id: taskId, status: 'sent' };
      }),
    );
    return { results };
  },
);

exitWithParent(async () => {
  await app.close();
  await redis.quit();
});
await redis.ping();
await app.listen({ host: '127.0.0.1', port: envInt('FLOOR_PORT', 0) });
announceReady();
