import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Log fields that may hold a secret (docs/SECURITY.md): request and reply headers that carry
 * keys, tokens and cookies; keys, tokens and passwords under their usual names; a Redis URL
 * (its password is masked, the rest kept); the arguments of a failed Redis command (`AUTH`
 * carries the password).
 */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'cookie',
  'key',
  '*.key',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'adminKey',
  '*.adminKey',
  'password',
  '*.password',
  '*.*.password',
  'redisUrl',
  '*.redisUrl',
  'url',
  'req.url',
  'err.command.args',
  'err.args',
];

const URL_PATHS = new Set(['redisUrl', 'url']);

/**
 * `redis://user:secret@host` → `redis://user:[redacted]@host`, and the values of query
 * parameters that look like credentials (`?key=…`: keys never go in query strings, but a client
 * may put one there) masked; other text is left alone.
 */
export function maskUrlPassword(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/i, '$1[redacted]@')
    .replace(
      /([?&](?:key|api_key|apikey|token|access_token|password|secret)=)[^&#]*/gi,
      '$1[redacted]',
    );
}

function censor(value: unknown, path: string[]): unknown {
  const last = path[path.length - 1] ?? '';
  if (URL_PATHS.has(last) && typeof value === 'string') return maskUrlPassword(value);
  return '[redacted]';
}

/** pino's `redact` setting of every service: {@link REDACT_PATHS}, URLs with their password masked. */
export const REDACTION: NonNullable<LoggerOptions['redact']> = {
  paths: [...REDACT_PATHS],
  censor,
};

/**
 * A service's logger: pino at `level` with `service` in every line and secrets redacted
 * ({@link REDACTION}); to `destination` when given (tests capture lines), else stdout.
 */
export function serviceLogger(
  service: string,
  level: string,
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = { level, base: { service }, redact: REDACTION };
  return destination ? pino(options, destination) : pino(options);
}
