/**
 * Requests for one operation, as a fast-check arbitrary: valid ones built from the operation's
 * schemas, and mutated ones — hostile ids, wrong types, deep, huge, broken or non-UTF-8 JSON,
 * unknown fields, odd content types and headers, bad credentials, and raw bytes that abuse
 * HTTP framing (bogus Content-Length, smuggling shapes, oversized header blocks).
 */
import fc from 'fast-check';
import {
  BAD_UTF8,
  badAuthorization,
  deepJsonText,
  hostileQueryTail,
  hostileQueryValue,
  hostileSegment,
  hugeJsonText,
  oddContentType,
  oddHeaders,
  oddJsonText,
  wrongTypeValue,
} from './hostile.ts';
import { CRLF, rawFraming, type Framing } from './framing.ts';
import { addField, dropOne, replaceAt } from './mutate.ts';
import type { Operation } from './operations.ts';
import { schemaArb, type SchemaArbOptions } from './schema-arb.ts';

/** Headers as node's HTTP client takes them (an array sends the header once per value). */
export type Headers = Record<string, string | string[]>;

/** One request of the fuzz. */
export interface FuzzRequest {
  /** What was done to it: `valid`, `hostile-id`, `deep-json`, `raw-framing`, … */
  category: string;
  method: string;
  /** Path and query as they go on the request line. */
  target: string;
  headers: Headers;
  body?: Buffer;
  /**
   * When set, these exact bytes go to a fresh socket instead (things node's client refuses to
   * send). The request asks the server to close the connection after its reply.
   */
  raw?: Buffer;
  /** The server may hang up without a reply (the request never finished, by design). */
  mayClose?: boolean;
  /**
   * The answer is JSON-RPC: the `error.code` of the body is read, or of the first event of an
   * event stream (JSON-RPC errors come back in 200 replies).
   */
  jsonrpc?: boolean;
  /** An event stream is read up to its first event, not only its head. */
  firstEvent?: boolean;
  /**
   * The JSON-RPC answers this request may get (`-32001`, `tool:TASK_NOT_FOUND`, …) when it gets
   * one: a well-formed call about an unknown task is "not found", a malformed id "invalid params".
   */
  expectRpc?: readonly string[];
}

/** How the requests for an operation are steered. */
export interface RequestOptions extends SchemaArbOptions {
  /** Valid `Authorization` values for this operation (API keys, agent tokens); none = omit. */
  auth?: fc.Arbitrary<string | undefined>;
}

interface Parts {
  path: Record<string, string>;
  query: [string, string][];
  body: unknown;
  hasBody: boolean;
  auth: string | undefined;
}

const SENTINEL = '\u0000fuzz-here\u0000';
const SENTINEL_JSON = JSON.stringify(SENTINEL);

/** Requests for `op`: about a third valid, the rest mutated in one way each. */
export function requestArb(op: Operation, opts: RequestOptions = {}): fc.Arbitrary<FuzzRequest> {
  const parts = partsArb(op, opts);
  const hasPath = op.params.some((p) => p.in === 'path');
  const hasQuery = op.params.some((p) => p.in === 'query');
  const b = op.body !== undefined;
  const arbs: fc.WeightedArbitrary<FuzzRequest>[] = [
    { weight: 30, arbitrary: parts.map((p) => build(op, p, 'valid')) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(parts, badAuthorization)
        .map(([p, a]) => build(op, { ...p }, 'bad-auth', { authorization: a })),
    },
    { weight: 2, arbitrary: parts.map((p) => build(op, { ...p, auth: undefined }, 'no-auth')) },
    {
      weight: 4,
      arbitrary: fc.tuple(parts, deepJsonText).map(([p, t]) => spliced(op, p, 'deep-json', t)),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(parts, hugeJsonText)
        .map(([p, t]) => ({ ...spliced(op, p, 'huge-json', t), mayClose: true })),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(parts, fc.constantFrom(...BAD_UTF8), fc.boolean())
        .map(([p, bytes, inString]) => badUtf8(op, p, bytes, inString)),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(parts, oddJsonText)
        .map(([p, t]) => build(op, p, 'odd-json', {}, Buffer.from(t))),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(parts, oddContentType)
        .map(([p, ct]) =>
          build(op, { ...p, hasBody: true }, 'content-type', { 'content-type': ct }),
        ),
    },
    {
      weight: 4,
      arbitrary: fc.tuple(parts, oddHeaders).map(([p, h]) => build(op, p, 'odd-headers', h)),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(parts, hostileQueryTail)
        .map(([p, t]) => build(op, p, 'hostile-query', {}, undefined, t)),
    },
    { weight: 4, arbitrary: fc.tuple(parts, rawFraming).map(([p, f]) => raw(op, p, f)) },
  ];
  if (hasPath)
    arbs.push({
      weight: 10,
      arbitrary: fc
        .tuple(parts, hostileSegment, fc.nat())
        .map(([p, seg, i]) => build(op, { ...p, path: replaceOne(p.path, i, seg) }, 'hostile-id')),
    });
  if (hasQuery)
    arbs.push({
      weight: 6,
      arbitrary: fc
        .tuple(parts, hostileQueryValue, fc.nat(), fc.boolean())
        .map(([p, v, i, dup]) =>
          build(op, { ...p, query: mutateQuery(op, p.query, i, v, dup) }, 'wrong-query'),
        ),
    });
  if (b) {
    arbs.push(
      {
        weight: 8,
        arbitrary: fc
          .tuple(parts, wrongTypeValue, fc.nat())
          .map(([p, v, i]) => build(op, { ...p, body: replaceAt(p.body, i, v) }, 'wrong-type')),
      },
      {
        weight: 3,
        arbitrary: fc
          .tuple(parts, fc.nat())
          .map(([p, i]) => build(op, { ...p, body: dropOne(p.body, i) }, 'missing-field')),
      },
      {
        weight: 4,
        arbitrary: fc
          .tuple(parts, fc.string({ maxLength: 20 }), wrongTypeValue, fc.nat())
          .map(([p, k, v, i]) =>
            build(op, { ...p, body: addField(p.body, i, k, v) }, 'unknown-field'),
          ),
      },
    );
  } else {
    arbs.push({
      weight: 3,
      arbitrary: fc
        .tuple(parts, fc.jsonValue({ maxDepth: 3 }))
        .map(([p, v]) => build(op, { ...p, body: v, hasBody: true }, 'unexpected-body')),
    });
  }
  return fc.oneof(...arbs);
}

function partsArb(op: Operation, opts: RequestOptions): fc.Arbitrary<Parts> {
  const path: Record<string, fc.Arbitrary<string>> = {};
  const query: fc.Arbitrary<[string, string] | null>[] = [];
  for (const p of op.params) {
    const value = schemaArb(p.schema, opts, p.name).map(String);
    if (p.in === 'path') path[p.name] = value.map(encodeURIComponent);
    else if (p.in === 'query')
      query.push(
        p.required
          ? value.map((v): [string, string] => [p.name, encodeURIComponent(v)])
          : fc.option(value.map((v): [string, string] => [p.name, encodeURIComponent(v)])),
      );
  }
  return fc.record({
    path: fc.record(path),
    query: fc.tuple(...query).map((q) => q.filter((x): x is [string, string] => x !== null)),
    body: op.body ? schemaArb(op.body, opts) : fc.constant(undefined),
    hasBody: fc.constant(op.body !== undefined),
    auth: opts.auth ?? fc.constant(undefined),
  });
}

function build(
  op: Operation,
  p: Parts,
  category: string,
  headers: Headers = {},
  body?: Buffer,
  queryTail?: string,
): FuzzRequest {
  const out: Headers = {};
  if (p.auth !== undefined) out.authorization = p.auth;
  const payload = body ?? (p.hasBody ? Buffer.from(JSON.stringify(p.body ?? {})) : undefined);
  if (payload) out['content-type'] = 'application/json';
  Object.assign(out, headers);
  return {
    category,
    method: op.method,
    target: target(op, p, queryTail),
    headers: out,
    ...(payload ? { body: payload } : {}),
  };
}

function target(op: Operation, p: Parts, queryTail?: string): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => p.path[name] ?? 'x');
  const query = p.query.map(([k, v]) => `${k}=${v}`);
  if (queryTail) query.push(queryTail);
  return query.length > 0 ? `${path}?${query.join('&')}` : path;
}

/** The body with one of its values (or the whole body) replaced by raw JSON text. */
function spliced(op: Operation, p: Parts, category: string, text: string): FuzzRequest {
  const json = JSON.stringify(
    p.body === undefined ? SENTINEL : replaceAt(p.body, textSeed(text), SENTINEL),
  );
  return build(op, p, category, {}, Buffer.from(json.replace(SENTINEL_JSON, () => text)));
}

function badUtf8(op: Operation, p: Parts, bytes: number[], inString: boolean): FuzzRequest {
  const base = p.body === undefined ? SENTINEL : replaceAt(p.body, bytes.length, SENTINEL);
  const [before = '', after = ''] = JSON.stringify(base).split(SENTINEL_JSON);
  const middle = inString
    ? Buffer.concat([Buffer.from('"a'), Buffer.from(bytes), Buffer.from('b"')])
    : Buffer.from(bytes);
  return build(
    op,
    p,
    'bad-utf8',
    {},
    Buffer.concat([Buffer.from(before), middle, Buffer.from(after)]),
  );
}

function textSeed(text: string): number {
  return text.length + text.charCodeAt(text.length >> 1);
}

function replaceOne(path: Record<string, string>, i: number, seg: string): Record<string, string> {
  const names = Object.keys(path);
  const name = names[i % names.length];
  return name === undefined ? path : { ...path, [name]: seg };
}

function mutateQuery(
  op: Operation,
  q: [string, string][],
  i: number,
  value: string,
  dup: boolean,
): [string, string][] {
  const names = op.params.filter((p) => p.in === 'query').map((p) => p.name);
  const name = names[i % names.length] ?? 'x';
  const rest = dup ? q : q.filter(([k]) => k !== name);
  return [...rest, [name, value]];
}

function raw(op: Operation, p: Parts, f: Framing): FuzzRequest {
  const req = build(op, p, 'raw-framing');
  const line = `${op.method} ${req.target} HTTP/1.1`;
  const auth = p.auth !== undefined ? `authorization: ${p.auth}${CRLF}` : '';
  const data = f.make(line, req.body ?? Buffer.from(JSON.stringify(p.body ?? {})));
  // The credentials (when any) go first in the header block, so a framing error is not an auth one.
  const at = data.indexOf('\n') + 1;
  const withAuth = Buffer.concat([
    data.subarray(0, at),
    Buffer.from(auth, 'latin1'),
    data.subarray(at),
  ]);
  return {
    ...req,
    category: `raw:${f.name}`,
    raw: withAuth,
    ...(f.wellFormed ? {} : { mayClose: true }),
  };
}
