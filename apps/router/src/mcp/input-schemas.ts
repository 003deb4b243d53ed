import type { RedisClient } from '@agent-reach/service-kit/redis';
import { AgentRecordField, type ReachKeys } from '@agent-reach/protocol';

/** A JSON Schema as registered (an object). */
export type JsonSchema = Record<string, unknown>;

/** What a {@link InputSchemaReader} reads with. */
export interface InputSchemaReaderOptions {
  redis: RedisClient;
  keys: ReachKeys;
}

/**
 * Reads the input schemas agents registered for their capabilities (`input_schemas`, stored in
 * each agent's record by registry-sync). One HGET per agent, each on its agent's slot.
 */
export class InputSchemaReader {
  constructor(private readonly o: InputSchemaReaderOptions) {}

  /** capability → schema, the first agent of `agentIds` (in order) with one winning. */
  async read(agentIds: readonly string[]): Promise<Map<string, JsonSchema>> {
    const agentKeys = agentIds.map((id) => this.o.keys.agent(id));
    const stored = await Promise.all(
      agentKeys.map((key) => this.o.redis.hget(key, AgentRecordField.inputSchemas)),
    );
    const schemas = new Map<string, JsonSchema>();
    for (const json of stored) {
      for (const [capability, schema] of Object.entries(decode(json))) {
        if (!schemas.has(capability)) schemas.set(capability, schema);
      }
    }
    return schemas;
  }
}

function decode(json: string | null): Record<string, JsonSchema> {
  if (json === null) return {};
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null) return {};
    return Object.fromEntries(
      Object.entries(value).filter(
        (e): e is [string, JsonSchema] =>
          typeof e[1] === 'object' && e[1] !== null && !Array.isArray(e[1]),
      ),
    );
  } catch {
    // registry-sync writes JSON; anything else is ignored (the tool takes any object).
    return {};
  }
}
