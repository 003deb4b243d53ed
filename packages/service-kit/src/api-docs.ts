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
    },
  });
  await app.register(swaggerUi, { routePrefix: DOCS_PATH, uiConfig: { docExpansion: 'list', deepLinking: true } });
}
