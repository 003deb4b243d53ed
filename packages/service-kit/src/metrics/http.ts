import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/** The path Prometheus scrapes. */
export const METRICS_PATH = '/metrics';

/** The route template of a request (`/v1/tasks/:task_id`), never the raw URL, so labels stay few. */
export function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

/**
 * Serves the registry at `GET /metrics` in Prometheus text format. A collector that fails (for
 * example one that reads Redis while it is down) is left out by prom-client's own handling or
 * by the collector itself; the endpoint still answers with the rest.
 */
export function installMetricsEndpoint(app: FastifyInstance, registry: Registry): void {
  app.get(
    METRICS_PATH,
    {
      // Scraped without a key (docs/SECURITY.md): counts and timings only, no ids or payloads.
      config: { auth: 'public' },
      schema: {
        summary: 'Prometheus metrics of this instance',
        tags: ['operations'],
        produces: ['text/plain'],
        response: { 200: { type: 'string', description: 'Prometheus text exposition format' } },
      },
    },
    async (_request, reply) => {
      const body = await registry.metrics();
      return reply.type(registry.contentType).send(body);
    },
  );
}

/**
 * Counts every request by method, route template and status (`reach_http_requests_total`) and
 * times it (`reach_http_request_duration_seconds`, from fastify's own start time of the request).
 * Add before the routes. One synchronous hook per request: an async hook costs a promise and a
 * microtask on every request.
 */
export function installHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'reach_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'reach_http_request_duration_seconds',
    help: 'Time from receiving a request to sending the reply, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeLabel(request);
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
}
