import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ReachProtocolError } from '../errors.ts';

/**
 * Checks a reply body against its schema from `@agent-reach/protocol`; a mismatch (an older or
 * newer server) fails here with a clear error instead of deep inside the agent later.
 */
export function checkReply<T extends TSchema>(
  schema: T,
  request: string,
  body: unknown,
): Static<T> {
  if (!Value.Check(schema, body)) throw new ReachProtocolError(request, body);
  return body;
}
