import { describe, expect, it } from 'vitest';
import type { RegisterBody } from '@agent-reach/protocol';
import { inputSchemasToStore, MAX_INPUT_SCHEMA_BYTES } from './input-schemas.ts';

const body = (input_schemas?: Record<string, unknown>): RegisterBody => ({
  agent_id: 'a',
  capabilities: ['echo', 'sum'],
  max_concurrency: 1,
  ...(input_schemas ? { input_schemas } : {}),
});

describe('inputSchemasToStore', () => {
  it('keeps object schemas of registered capabilities as JSON; none gives undefined', () => {
    const echo = { type: 'object', properties: { text: { type: 'string' } } };
    expect(inputSchemasToStore(body({ echo, sum: {} }))).toBe(JSON.stringify({ echo, sum: {} }));
    expect(inputSchemasToStore(body())).toBeUndefined();
    expect(inputSchemasToStore(body({}))).toBeUndefined();
  });

  it.each([
    ['a capability not registered', { other: {} }, /not in capabilities/],
    ['an array', { echo: [] }, /JSON Schema object/],
    ['a string', { echo: 'x' }, /JSON Schema object/],
    ['a non-object type', { echo: { type: 'string' } }, /describe an object/],
    [
      'a schema over the cap',
      { echo: { description: 'x'.repeat(MAX_INPUT_SCHEMA_BYTES) } },
      /at most 16384/,
    ],
  ])('refuses %s with INVALID_INPUT_SCHEMA', (_name, schemas, message) => {
    expect(() => inputSchemasToStore(body(schemas))).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT_SCHEMA',
        statusCode: 400,
        message: expect.stringMatching(message),
      }),
    );
  });
});
