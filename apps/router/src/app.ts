import Fastify, { type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Redis } from 'ioredis';
import { baseFastifyOptions, installErrorHandling, isRedisUnavailable } from '@agent-reach/service-kit';
import type { CallbackReader } from './callbacks/callback-reader.ts';
import type { Dispatcher } from './dispatch/dispatcher.ts';
import type { TaskReader } from './tasks/task-reader.ts';
import type { SnapshotHolder } from '@agent-reach/dispatch';
import { callbacksRoutes } from './routes/callbacks/index.ts';
import { tasksRoutes } from './routes/tasks/index.ts';

/** Collaborators the router's HTTP app is built from. */
export interface RouterAppDeps {
  redis: Redis;
  dispatcher: Dispatcher;
  tasks: TaskReader;
  callbacks: CallbackReader;
  snapshot: SnapshotHolder;
  maxPayloadBytes: number;
  logger?: FastifyServerOptions['loggerInstance'];
}

/** Builds the router's HTTP app; never listens (server.ts does, tests use inject). */
export async function buildRouterApp(deps: RouterAppDeps) {
  // The body may carry a payload of the full limit plus the envelope around it.
  const app = Fastify({
    ...baseFastifyOptions(deps.maxPayloadBytes + 64 * 1024),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandling(app, isRedisUnavailable);
  app.get('/healthz', async (_request, reply) => {
    try {
      await deps.redis.ping();
      return { status: 'ok', snapshot: deps.snapshot.info() };
    } catch {
      return reply.code(503).send({ error: 'STORE_UNAVAILABLE', message: 'Redis does not answer' });
    }
  });
  await app.register(tasksRoutes, { dispatcher: deps.dispatcher, tasks: deps.tasks });
  await app.register(callbacksRoutes, { reader: deps.callbacks });
  return app;
}
