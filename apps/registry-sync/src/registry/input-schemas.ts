import type { RegisterBody } from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';

/** Largest input schema one capability may register, as JSON, bytes. */
export const MAX_INPUT_SCHEMA_BYTES = 16 * 1024;

/**
 * Checks a registration's `input_schemas` (capability → JSON Schema of its payload, the input
 * schema of the capability's MCP tool) and returns them as the JSON to store with the agent, or
 * `undefined` when none was given.
 * @throws INVALID_INPUT_SCHEMA (400) for a capability the agent does not register, a schema that
 *   is not a JSON object or describes something other than an object, or one over the size cap.
 */
export function inputSchemasToStore(body: RegisterBody): string | undefined {
  const schemas = body.input_schemas;
  if (schemas === undefined || Object.keys(schemas).length === 0) return undefined;
  const fail = (message: string) => httpError('INVALID_INPUT_SCHEMA', message);
  for (const [capability, schema] of Object.entries(schemas)) {
    if (!body.capabilities.includes(capability))
      throw fail(
        `input_schemas names ${capability}, which is not in capabilities: give schemas only for the capabilities registered`,
      );
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
      throw fail(`input_schemas.${capability} must be a JSON Schema object`);
    const type = (schema as { type?: unknown }).type;
    if (type !== undefined && type !== 'object')
      throw fail(
        `input_schemas.${capability} must describe an object ("type": "object"): a tool's arguments are an object`,
      );
    const bytes = Buffer.byteLength(JSON.stringify(schema));
    if (bytes > MAX_INPUT_SCHEMA_BYTES)
      throw fail(
        `input_schemas.${capability} is ${bytes} bytes as JSON; at most ${MAX_INPUT_SCHEMA_BYTES}`,
      );
  }
  return JSON.stringify(schemas);
}
