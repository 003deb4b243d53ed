import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorReply } from '@agent-reach/protocol';
import { httpError, principalOf } from '@agent-reach/service-kit';
import { ConsoleTenantView } from '../../console/tenant-view.ts';
import { CONSOLE_CSP, type ConsoleAsset } from '../../console/assets.ts';
import type { AgentTable } from '../../console/agent-table.ts';
import type { FleetEventHub } from '../../console/fleet-event-hub.ts';
import type { TaskSampler } from '../../console/recent-tasks.ts';
import {
  ConsoleAgentsQuery,
  ConsoleAgentsReply,
  ConsoleEventsHeaders,
  ConsoleEventsQuery,
  ConsoleFleetEventSchema,
  ConsoleLatencyQuery,
  ConsoleLatencyReply,
} from '../../console/schemas.ts';

/** What the console routes need. */
export interface ConsoleRouteDeps {
  assets: Map<string, ConsoleAsset>;
  agents: AgentTable;
  hub: FleetEventHub;
  sampler: TaskSampler;
}

const tags = ['console'];
/** The console's page names (console/assets/pages.js lists them). */
const CONSOLE_PAGE_PATTERN = '^(tasks|agents|capabilities|dead-letters|schedules|tenants)$';
/** The page and its files hold no data: served without a key, so it can show the login form. */
const page = { auth: 'public' as const };
/** The data the page shows: operators and callers (by the login cookie or a bearer key). */
const reader = { roles: ['operator', 'caller'] as const };

/** The operators' console page and the endpoints it reads. */
export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleRouteDeps> = async (
  app,
  { assets, agents, hub, sampler },
) => {
  // Open event streams would otherwise hold app.close() until the browsers hang up.
  app.addHook('preClose', async () => hub.close());

  const send = (name: string) => {
    const asset = assets.get(name);
    if (!asset) throw httpError('NOT_FOUND', `no console file ${name}`);
    return asset;
  };
  const sendPage = (reply: FastifyReply) => {
    const html = send('index.html');
    return reply
      .type(html.type)
      .header('content-security-policy', CONSOLE_CSP)
      .header('cache-control', 'no-cache')
      .send(html.body);
  };

  app.get(
    '/console',
    {
      config: page,
      schema: {
        tags,
        summary: 'The console page (HTML)',
        produces: ['text/html'],
        response: { 200: Type.String() },
      },
    },
    async (_request, reply) => sendPage(reply),
  );

  // Every page of the console is the same HTML; its script reads the path and the query
  // (`/console/tasks?status=failed`, `/console/agents/a1`), so each view can be linked to.
  app.get(
    '/console/:page',
    {
      config: page,
      schema: {
        tags,
        summary: 'A page of the console (HTML): tasks, agents, capabilities, dead letters…',
        produces: ['text/html'],
        params: Type.Object({ page: Type.String({ pattern: CONSOLE_PAGE_PATTERN }) }),
        response: { 200: Type.String(), 400: ErrorReply },
      },
    },
    async (_request, reply) => sendPage(reply),
  );

  app.get(
    '/console/:page/:item',
    {
      config: page,
      schema: {
        tags,
        summary: 'One item on a page of the console (HTML): a task, an agent, a capability…',
        produces: ['text/html'],
        params: Type.Object({
          page: Type.String({ pattern: CONSOLE_PAGE_PATTERN }),
          item: Type.String({ minLength: 1, maxLength: 256 }),
        }),
        response: { 200: Type.String(), 400: ErrorReply },
      },
    },
    async (_request, reply) => sendPage(reply),
  );

  app.get(
    '/console/assets/:file',
    {
      config: page,
      schema: {
        tags,
        summary: "The console page's scripts and styles",
        params: Type.Object({ file: Type.String({ pattern: '^[a-z0-9-]{1,64}\\.(js|css|svg)$' }) }),
        response: { 200: Type.String(), 400: ErrorReply, 404: ErrorReply },
      },
    },
    async (request, reply) => {
      const asset = send(request.params.file);
      return reply.type(asset.type).header('cache-control', 'no-cache').send(asset.body);
    },
  );

  app.get(
    '/v1/console/agents',
    {
      config: reader,
      schema: {
        tags,
        summary: 'Every agent with status, load, heartbeat age and recent success rate',
        querystring: ConsoleAgentsQuery,
        response: { 200: ConsoleAgentsReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    // A key that is not an operator's sees its tenant's part (console/tenant-view.ts).
    async (request) =>
      new ConsoleTenantView(principalOf(request)).agents(
        await agents.read(request.query.limit ?? 500),
      ),
  );

  app.get(
    '/v1/console/latency',
    {
      config: reader,
      schema: {
        tags,
        summary: 'Stage latencies of the tasks this router sent recently',
        querystring: ConsoleLatencyQuery,
        response: { 200: ConsoleLatencyReply, 400: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const { points } = await sampler.sample();
      const seen = new ConsoleTenantView(principalOf(request)).points(points);
      return { points: seen.slice(-(request.query.limit ?? 200)), now: Date.now() };
    },
  );

  app.get(
    '/v1/console/events',
    {
      config: reader,
      schema: {
        tags,
        summary:
          'Fleet events as server-sent events: recent ones, then live (registrations, status changes, retries, dead letters)',
        description: `A text/event-stream. Each event's id is its stream entry id and its data one JSON object: ${JSON.stringify(ConsoleFleetEventSchema)}`,
        produces: ['text/event-stream'],
        querystring: ConsoleEventsQuery,
        headers: ConsoleEventsHeaders,
        response: { 200: Type.String({ description: 'text/event-stream' }), 400: ErrorReply },
      },
    },
    async (request, reply) => {
      const view = new ConsoleTenantView(principalOf(request));
      reply.hijack();
      await hub.attach(reply.raw, {
        backlog: request.query.backlog ?? 50,
        lastEventId: request.headers['last-event-id'],
        ...(view.all ? {} : { show: (event) => view.event(event) }),
      });
    },
  );
};
