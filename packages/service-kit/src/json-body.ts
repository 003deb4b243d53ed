import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsonTextDepth, MAX_JSON_DEPTH } from '@agent-reach/protocol';
import { httpError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Most levels of arrays and objects a JSON body of this route may nest, the body itself
     * counting as one. Default `MAX_JSON_DEPTH + 1`: every field of the body (a payload, `meta`)
     * at most MAX_JSON_DEPTH. A route that takes items (a batch) allows its envelope on top and
     * checks each item itself.
     */
    maxJsonDepth?: number;
  }
}

/**
 * Parses JSON bodies as fastify does (prototype poisoning refused), after checking how deep
 * they nest: a body past its route's `config.maxJsonDepth` is refused with 400 JSON_TOO_DEEP
 * before it is parsed. One pass over the text, stopped at the limit; the parse costs more.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error',
    app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string | Buffer, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      const max = request.routeOptions.config?.maxJsonDepth ?? MAX_JSON_DEPTH + 1;
      if (jsonTextDepth(text, max) > max) {
        done(
          httpError(
            'JSON_TOO_DEEP',
            `body nests deeper than ${max} levels of arrays and objects: a payload or meta may nest at most ${MAX_JSON_DEPTH}`,
          ),
          undefined,
        );
        return;
      }
      void parse(request, text, done);
    },
  );
}
