/**
 * The endpoints a service publishes, read at run time from its OpenAPI document (`/docs/json`),
 * so that an endpoint added to a service is fuzzed without touching the fuzz.
 */
import type { JsonSchema } from './schema-arb.ts';

/** One parameter of an operation. */
export interface OperationParam {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
}

/** One method on one path of a service. */
export interface Operation {
  /** Which service (`router`, `registry-sync`): printed in the figures. */
  service: string;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  method: string;
  /** The OpenAPI template, e.g. `/v1/tasks/{task_id}`. */
  path: string;
  params: OperationParam[];
  /** The JSON body's schema, when the operation takes one. */
  body?: JsonSchema;
  /** The operation answers with a server-sent event stream (read its head, then hang up). */
  stream: boolean;
}

interface OpenApiOperation {
  parameters?: {
    name: string;
    in: OperationParam['in'];
    required?: boolean;
    schema?: JsonSchema;
  }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
  description?: string;
}

interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /path` of an operation: the key of its figures. */
export function operationKey(op: Operation): string {
  return `${op.service} ${op.method} ${op.path}`;
}

/** Reads a service's OpenAPI document and lists its operations. */
export async function loadOperations(service: string, baseUrl: string): Promise<Operation[]> {
  const res = await fetch(`${baseUrl}/docs/json`);
  if (res.status !== 200) throw new Error(`${service} /docs/json answered ${res.status}`);
  const doc = (await res.json()) as OpenApiDoc;
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const body = op.requestBody?.content?.['application/json']?.schema;
      ops.push({
        service,
        baseUrl,
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required ?? p.in === 'path',
          schema: resolve(doc, p.schema ?? {}),
        })),
        ...(body ? { body: resolve(doc, body) } : {}),
        stream: isEventStream(op),
      });
    }
  }
  return ops;
}

function isEventStream(op: OpenApiOperation): boolean {
  if (op.description?.includes('text/event-stream')) return true;
  return Object.values(op.responses ?? {}).some((r) =>
    Object.keys(r.content ?? {}).includes('text/event-stream'),
  );
}

/** Inlines `#/components/schemas/*` references (fastify's document may use them). */
function resolve(doc: OpenApiDoc, schema: JsonSchema, depth = 0): JsonSchema {
  if (depth > 20) return {};
  if (schema.$ref?.startsWith('#/components/schemas/')) {
    const target = doc.components?.schemas?.[schema.$ref.slice('#/components/schemas/'.length)];
    return target ? resolve(doc, target, depth + 1) : {};
  }
  const out: JsonSchema = { ...schema };
  if (schema.items) out.items = resolve(doc, schema.items, depth + 1);
  if (schema.anyOf) out.anyOf = schema.anyOf.map((s) => resolve(doc, s, depth + 1));
  if (schema.oneOf) out.oneOf = schema.oneOf.map((s) => resolve(doc, s, depth + 1));
  if (schema.allOf) out.allOf = schema.allOf.map((s) => resolve(doc, s, depth + 1));
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([k, v]) => [k, resolve(doc, v, depth + 1)]),
    );
  }
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    out.additionalProperties = resolve(doc, schema.additionalProperties, depth + 1);
  return out;
}
