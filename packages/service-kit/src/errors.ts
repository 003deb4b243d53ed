import createError, { type FastifyErrorConstructor } from '@fastify/error';
import { ERROR_CODES, type ErrorCode } from '@agent-reach/protocol';

const constructors = new Map<ErrorCode, FastifyErrorConstructor>();

/**
 * A typed HTTP error with one of the stable codes (`@fastify/error`): the error handler turns
 * it into `{error: code, message}` with the code's status.
 */
export function httpError(code: ErrorCode, message: string): Error {
  let ctor = constructors.get(code);
  if (!ctor) {
    ctor = createError(code, '%s', ERROR_CODES[code]);
    constructors.set(code, ctor);
  }
  return new ctor(message);
}
