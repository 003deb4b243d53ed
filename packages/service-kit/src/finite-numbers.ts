import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ErrorCode } from '@agent-reach/protocol';
import { httpError } from './errors.ts';

/** The parts of a JSON schema the walk reads. */
interface NumberSchema {
  properties?: Record<string, NumberSchema>;
  items?: NumberSchema;
}

/**
 * Where a value that validated is a non-finite number, or undefined. Ajv 8 coerces the strings
 * `Infinity`, `-Infinity`, `1e400` (any number too large for a double) to ±Infinity and then
 * skips `minimum`/`maximum` for them (ajv-validator/ajv#2212, fastify/fastify#6718): such a
 * query value or body field reached the handlers, and Redis answered an error (a 500). Only the
 * places a schema types are walked, never a free-form payload, which JSON.parse cannot fill
 * with a non-finite number.
 */
export function nonFiniteAt(schema: unknown, value: unknown, at = ''): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : at;
  if (!schema || typeof schema !== 'object' || !value || typeof value !== 'object') return;
  const s = schema as NumberSchema;
  if (Array.isArray(value)) {
    if (!s.items) return;
    for (let i = 0; i < value.length; i++) {
      const found = nonFiniteAt(s.items, value[i], `${at}/${i}`);
      if (found !== undefined) return found;
    }
    return;
  }
  for (const [key, sub] of Object.entries(s.properties ?? {})) {
    if (!Object.hasOwn(value, key)) continue;
    const found = nonFiniteAt(sub, (value as Record<string, unknown>)[key], `${at}/${key}`);
    if (found !== undefined) return found;
  }
  return;
}

const PARTS = [
  ['querystring', 'query', 'INVALID_QUERY'],
  ['params', 'params', 'INVALID_PARAMS'],
  ['body', 'body', 'INVALID_BODY'],
] as const satisfies readonly (readonly [string, keyof FastifyRequest, ErrorCode])[];

/** Answers `400` to a request whose numbers validated as ±Infinity (see {@link nonFiniteAt}). */
export function rejectNonFiniteNumbers(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    const schema = request.routeOptions.schema as Record<string, unknown> | undefined;
    if (!schema) return;
    for (const [part, field, code] of PARTS) {
      if (!schema[part]) continue;
      const at = nonFiniteAt(schema[part], request[field]);
      if (at !== undefined) throw httpError(code, `${part}${at} must be a finite number`);
    }
  });
}
