import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The parts of a W3C `traceparent` header (https://www.w3.org/TR/trace-context/). */
export interface TraceParent {
  /** Two lowercase hex digits; `00` today. */
  version: string;
  /** 32 lowercase hex digits, not all zeros. */
  traceId: string;
  /** 16 lowercase hex digits, not all zeros: the caller's span. */
  parentId: string;
  /** Two lowercase hex digits; bit 0 is "sampled". */
  flags: string;
}

const HEX = /^[0-9a-f]+$/;
const isHex = (s: string, len: number) => s.length === len && HEX.test(s);
const allZeros = (s: string) => /^0+$/.test(s);

/**
 * Parses a `traceparent` header as the W3C Trace Context spec says a receiver must: version 00
 * is exactly `00-<32 hex>-<16 hex>-<2 hex>`, lowercase only; a trace id or parent id of all
 * zeros is invalid; version `ff` is invalid; a higher version is read by its first four fields
 * when what follows them starts with `-`. Undefined for anything invalid (or several headers),
 * in which case the spec says to start a new trace rather than refuse the request.
 */
export function parseTraceparent(
  header: string | readonly string[] | undefined,
): TraceParent | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  if (value.length < 55) return undefined;
  const version = value.slice(0, 2);
  if (!isHex(version, 2) || version === 'ff') return undefined;
  if (version === '00' ? value.length !== 55 : value.length > 55 && value[55] !== '-')
    return undefined;
  const [v, traceId = '', parentId = '', flags = ''] = value.slice(0, 55).split('-');
  if (v !== version || !isHex(traceId, 32) || !isHex(parentId, 16) || !isHex(flags, 2))
    return undefined;
  if (allZeros(traceId) || allZeros(parentId)) return undefined;
  return { version, traceId, parentId, flags };
}

/** A new random trace id in W3C form (32 lowercase hex digits), usable in a `traceparent`. */
export function newTraceId(): string {
  // randomUUID draws from a cached entropy pool: far cheaper per call than randomBytes(16).
  let id: string;
  do id = randomUUID().replace(/-/g, '');
  while (allZeros(id));
  return id;
}

/**
 * The trace id a task carries: the caller's explicit `trace_id` when given, else the trace id
 * of a valid W3C `traceparent` header, else a new one — so every task's logs, stream entries
 * and events can be joined by one id.
 */
export function resolveTraceId(
  bodyTraceId: string | undefined,
  traceparent: string | readonly string[] | undefined,
): string {
  if (bodyTraceId) return bodyTraceId;
  return parseTraceparent(traceparent)?.traceId ?? newTraceId();
}

/** Levels at which request lines (info) are written. */
const VERBOSE_LEVELS: ReadonlySet<string> = new Set(['trace', 'debug', 'info']);

/** Log bindings a request may carry; the names are ours, only the values come from callers. */
export interface RequestLogBindings {
  trace_id?: string | undefined;
  task_id?: string | undefined;
}

/**
 * Makes the rest of this request's logs — handler and error logs, and fastify's own
 * "request completed" line, which is written through `reply.log` — carry the bindings given.
 * Undefined values are skipped.
 */
export function bindRequestLog(
  request: FastifyRequest,
  reply: FastifyReply,
  bindings: RequestLogBindings,
): void {
  const defined: Record<string, string> = {};
  if (bindings.trace_id !== undefined) defined.trace_id = bindings.trace_id;
  if (bindings.task_id !== undefined) defined.task_id = bindings.task_id;
  // A child logger costs on every request: only when its lines would be written at all.
  if (Object.keys(defined).length === 0 || !VERBOSE_LEVELS.has(request.log.level)) return;
  const child = request.log.child(defined);
  request.log = child;
  reply.log = child;
}
