import { UsageError } from './errors.ts';

/** A task payload given on the command line as JSON text; a usage error says how to quote it. */
export function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err: unknown) {
    const why = err instanceof Error ? err.message : String(err);
    throw new UsageError(`<json> is not valid JSON (${why}); quote it, e.g. '{"text":"hi"}'`);
  }
}
