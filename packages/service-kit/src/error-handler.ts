import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '@agent-reach/protocol';
import { installJsonBodyParser } from './json-body.ts';
import { DebugRequestLog } from './request-log.ts';
import { rejectNonFiniteNumbers } from './finite-numbers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The task a submission is about, set by its route before anything can fail: an error reply
     * to the request carries it as `task_id`, because a 429 or 5xx submission may have been
     * accepted all the same and the caller retries with that same task_id (idempotent).
     */
    errorTaskId: string | undefined;
  }
}

/** Tells whether an error means the store (Redis) cannot be reached right now. */
export type StoreErrorPredicate = (err: unknown) => boolean;

const VALIDATION_CODES: Record<string, ErrorCode> = {
  body: 'INVALID_BODY',
  querystring: 'INVALID_QUERY',
  params: 'INVALID_PARAMS',
  headers: 'INVALID_QUERY',
};

/** An error as the API answers it: status, stable code and message. */
export interface DescribedError {
  status: number;
  code: ErrorCode;
  message: string;
}

/** How the API answers `err`: the same mapping for a whole request and for one item of a batch. */
export function describeError(
  err: FastifyError,
  isStoreError: StoreErrorPredicate,
): DescribedError {
  if (err.validation) {
    const code = VALIDATION_CODES[err.validationContext ?? 'body'] ?? 'INVALID_BODY';
    return { status: 400, code, message: err.message };
  }
  if (isErrorCode(err.code))
    return { status: ERROR_CODES[err.code], code: err.code, message: err.message };
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        message: 'request body is larger than the limit',
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'send the body as application/json',
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: 'INVALID_JSON', message: 'body is empty; send a JSON object' };
    default:
      break;
  }
  if (
    err instanceof SyntaxError ||
    (err.statusCode === 400 && err.code?.startsWith('FST_ERR_CTP'))
  ) {
    return { status: 400, code: 'INVALID_JSON', message: `body is not valid JSON: ${err.message}` };
  }
  if (isStoreError(err)) {
    return {
      status: 503,
      code: 'STORE_UNAVAILABLE',
      message: 'the store (Redis) is unavailable; retry shortly',
    };
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return { status: err.statusCode, code: 'INVALID_BODY', message: err.message };
  }
  return { status: 500, code: 'INTERNAL', message: 'internal error' };
}

/**
 * Logs an error reply at the level it deserves: an unexpected failure (`INTERNAL`) at error with
 * its stack, the store being away at warn (an operator looks at it, but one line per request
 * carries no stack), and every designed refusal (a 4xx, `NO_AGENT`, `EVENTS_UNAVAILABLE`,
 * `NO_SNAPSHOT`…) at info with its code, so real errors do not drown in them.
 */
export function logRefusal(request: FastifyRequest, mapped: DescribedError, err: unknown): void {
  const fields = { code: mapped.code, status: mapped.status };
  if (mapped.code === 'INTERNAL') request.log.error({ err }, 'request failed');
  else if (mapped.code === 'STORE_UNAVAILABLE')
    request.log.warn({ ...fields, cause: (err as Error | undefined)?.message }, mapped.message);
  else request.log.info(fields, mapped.message);
}

/**
 * Installs the error and not-found handlers every service uses: each error reply is
 * `{error: CODE, message}` with a stable code, plus `task_id` when the route set
 * `request.errorTaskId`; a client's mistake is never a 500.
 */
export function installErrorHandling(
  app: FastifyInstance,
  isStoreError: StoreErrorPredicate,
): void {
  app.decorateRequest('errorTaskId', undefined);
  // Bodies are JSON only: anything else is a 415, not a confusing schema error.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  rejectNonFiniteNumbers(app);
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const mapped = describeError(err, isStoreError);
    const taskId = request.errorTaskId;
    logRefusal(request, mapped, err);
    if ((mapped.status === 503 || mapped.status === 429) && !reply.hasHeader('retry-after'))
      void reply.header('retry-after', '1');
    return reply.code(mapped.status).send({
      error: mapped.code,
      message: mapped.message,
      ...(taskId === undefined ? {} : { task_id: taskId }),
    });
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).send({
      error: 'NOT_FOUND',
      message: `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
    }),
  );
}

interface SchemaError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** Validation messages that name the field to fix, including an unknown property's name. */
function schemaErrorFormatter(errors: SchemaError[], dataVar: string): Error {
  const messages = errors.map((e) => {
    const at = `${dataVar}${e.instancePath ?? ''}`;
    if (e.keyword === 'additionalProperties' && typeof e.params?.additionalProperty === 'string') {
      return `${at} has unknown property "${e.params.additionalProperty}"`;
    }
    return `${at} ${e.message ?? 'is invalid'}`;
  });
  return new Error(messages.join('; '));
}

/** Longest path parameter the services take (fastify's `maxParamLength`). */
export const MAX_PARAM_LENGTH = 256;

/**
 * Fastify options both services share. Ajv keeps unknown properties so that
 * `additionalProperties: false` rejects a misspelt field instead of silently dropping it; a
 * request's received and answered lines are at `debug` ({@link DebugRequestLog}).
 */
export function baseFastifyOptions(bodyLimit: number) {
  return {
    bodyLimit,
    logController: new DebugRequestLog(),
    schemaErrorFormatter,
    ajv: {
      customOptions: { removeAdditional: false as const, coerceTypes: true, useDefaults: true },
    },
    return503OnClosing: true,
    // A path parameter may be a scoped id: a 32-character tenant, `/` (as %2F), a 128-character
    // id. Fastify's default of 100 answered 414 for ids the API accepts (a 101-character task_id
    // could be submitted but not read); longer ones are refused by the routes' schemas.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: refuseUnroutable,
  };
}

/**
 * The router's own refusals, before any route runs, in the API's error form: a path parameter
 * past {@link MAX_PARAM_LENGTH} (fastify's 414 `FST_ERR_MAX_PARAM_LENGTH`) or a URL that does not
 * decode (`FST_ERR_BAD_URL`) is `400 INVALID_PARAMS`, like any other id the routes refuse.
 */
function refuseUnroutable(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`
      : 'the URL does not decode: a path parameter has a bad %-escape';
  void reply.code(ERROR_CODES.INVALID_PARAMS).send({ error: 'INVALID_PARAMS', message });
}
