/**
 * fast-check arbitraries of the values a JSON Schema (as fastify publishes it in /docs/json)
 * accepts: the "valid" half of the fuzz. Covers the keywords the services' TypeBox schemas use —
 * type, pattern, enum/const, anyOf/oneOf, minimum/maximum, minItems/maxItems/uniqueItems,
 * required/properties/additionalProperties, maxProperties — and treats `{}` as any JSON value.
 */
import fc from 'fast-check';

/** The subset of JSON Schema read here. */
export interface JsonSchema {
  type?: string | string[];
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  items?: JsonSchema;
  required?: string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  maxProperties?: number;
  default?: unknown;
  $ref?: string;
}

/** How a generated value may be steered toward ids the services know. */
export interface SchemaArbOptions {
  /**
   * Values to draw a named property or parameter from half of the time (e.g. `capability` →
   * the capability the test's agents serve), so that valid requests reach past "not found".
   */
  known?: Record<string, readonly unknown[]>;
  /** Upper bounds that keep a run bounded in time (e.g. `wait_ms` → 200). */
  caps?: Record<string, number>;
  /** Longest array generated (schemas allow up to 1,000 tasks a batch). @default 8 */
  maxArray?: number;
}

const ANY_JSON = fc.jsonValue({ maxDepth: 3 });

/** An arbitrary of values valid against `schema`. `name` is the property's or parameter's name. */
export function schemaArb(
  schema: JsonSchema,
  opts: SchemaArbOptions = {},
  name?: string,
): fc.Arbitrary<unknown> {
  const plain = plainArb(schema, opts, name);
  const known = name !== undefined ? opts.known?.[name] : undefined;
  return known && known.length > 0 ? fc.oneof(fc.constantFrom(...known), plain) : plain;
}

function plainArb(
  schema: JsonSchema,
  opts: SchemaArbOptions,
  name?: string,
): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts && alts.length > 0) return fc.oneof(...alts.map((s) => plainArb(s, opts, name)));
  if (schema.allOf?.length === 1 && schema.allOf[0]) return plainArb(schema.allOf[0], opts, name);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringArb(schema);
    case 'integer':
    case 'number':
      return numberArb(schema, type, name !== undefined ? opts.caps?.[name] : undefined);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return arrayArb(schema, opts, name);
    case 'object':
      return objectArb(schema, opts);
    default:
      return ANY_JSON;
  }
}

function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: schema.maxLength ?? 64 });
}

function numberArb(
  schema: JsonSchema,
  type: 'integer' | 'number',
  cap: number | undefined,
): fc.Arbitrary<number> {
  const lo = schema.minimum ?? schema.exclusiveMinimum ?? -1e9;
  let hi = schema.maximum ?? schema.exclusiveMaximum ?? 1e9;
  if (cap !== undefined) hi = Math.max(lo, Math.min(hi, cap));
  if (type === 'integer') return fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) });
  return fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
}

function arrayArb(
  schema: JsonSchema,
  opts: SchemaArbOptions,
  name?: string,
): fc.Arbitrary<unknown[]> {
  const item = schemaArb(schema.items ?? {}, opts, name);
  const minLength = schema.minItems ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 16, opts.maxArray ?? 8));
  return schema.uniqueItems
    ? fc.uniqueArray(item, { minLength, maxLength, comparator: 'SameValueZero' })
    : fc.array(item, { minLength, maxLength });
}

function objectArb(schema: JsonSchema, opts: SchemaArbOptions): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  const keys = Object.keys(props);
  if (keys.length === 0) {
    // A free-form map (`meta`): JSON values under keys within maxProperties.
    const extra = schema.additionalProperties === false ? undefined : schema.additionalProperties;
    if (extra === undefined) return fc.constant({});
    const value = extra === true ? ANY_JSON : schemaArb(extra, opts);
    return fc.dictionary(fc.string({ maxLength: 16 }), value, {
      maxKeys: Math.min(schema.maxProperties ?? 8, 8),
    });
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const key of keys) model[key] = schemaArb(props[key] ?? {}, opts, key);
  return fc.record(model, { requiredKeys: schema.required ?? [] });
}
