import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsonTextDepth, MAX_JSON_DEPTH } from '@agent-reach/protocol';
import { httpError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * How deep the JSON body nests (the body itself one level); 0 for a body too short to nest
     * past MAX_JSON_DEPTH, which is not scanned. A route whose body may nest deeper than
     * MAX_JSON_DEPTH + 1 checks its values when this says one could be too deep.
     */
    jsonBodyDepth: number;
  }
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
 * before it is parsed. One pass over the text (strings skipped), stopped at the limit: about a
 * third of the parse for a dense 1 KB body, nothing for one under 129 characters.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.decorateRequest('jsonBodyDepth', 0);
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
      // n characters nest at most n / 2 levels: most bodies are not scanned at all.
      const depth = text.length > 2 * MAX_JSON_DEPTH ? jsonTextDepth(text, max) : 0;
      request.jsonBodyDepth = depth;
      if (depth > max) {
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
