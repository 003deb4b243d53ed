import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

/** The path of the OpenAPI UI; the document itself is at `${DOCS_PATH}/json`. */
export const DOCS_PATH = '/docs';

/** What the OpenAPI document says about a service. */
export interface ApiDocsInfo {
  title: string;
  description: string;
  version: string;
  /** Tags in the order the UI lists them, with a line each. */
  tags?: { name: string; description: string }[];
}

/**
 * Registers @fastify/swagger (OpenAPI 3, built from the routes' TypeBox schemas) and its UI at
 * `/docs`, with the document at `/docs/json`. Register it before the routes: @fastify/swagger
 * learns routes through the `onRoute` hook, so a route added earlier is missing from the docs.
 * Everything is served from node_modules; nothing is fetched from a CDN.
 */
export async function registerApiDocs(app: FastifyInstance, info: ApiDocsInfo): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: info.title, description: info.description, version: info.version },
      ...(info.tags ? { tags: info.tags } : {}),
      // Which a route takes is set per route by the auth hook (installAuth): docs/SECURITY.md.
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (rk_<key_id>_<secret>); not needed while auth is off (loopback, REACH_AUTH=auto)',
          },
          agentToken: {
            type: 'http',
            scheme: 'bearer',
            description: "The agent's token from its register reply (<epoch>.<secret>)",
          },
        },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
}

/** One route an app serves. */
export interface ServedRoute {
  method: string;
  /** The route template, `:param` style. */
  url: string;
}

/**
 * Every route the app serves (HEAD routes fastify adds for GETs left out), read from fastify's
 * own route tree — what tests compare the OpenAPI document against. Call after `ready()`.
 */
export function listRoutes(app: FastifyInstance): ServedRoute[] {
  const out: ServedRoute[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S*)(?: \(([^)]*)\))?\s*$/.exec(line);
    if (!m) continue;
    const depth = (m[1] ?? '').length / 4;
    stack.length = depth;
    const url = `${stack.join('')}${m[2] ?? ''}`;
    stack.push(m[2] ?? '');
    for (const method of (m[3] ?? '').split(',').map((x) => x.trim())) {
      if (method && method !== 'HEAD') out.push({ method, url });
    }
  }
  return out;
}
