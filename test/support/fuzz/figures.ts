/**
 * What a fuzz run counts — requests and statuses per endpoint and per kind of request, the
 * failures with the request that caused each — and how the figures are printed.
 */
import type { FuzzRequest } from './requests.ts';
import type { Outcome } from './send.ts';

/**
 * 5xx replies that are the API's designed answer to a well-formed request, not a server fault:
 * `503 NO_AGENT` (no live agent serves the capability asked for) and `502 CARD_FETCH_FAILED` (a
 * registration's `card_url` on a loopback host that serves no card).
 */
export const DESIGNED_5XX = new Set(['503 NO_AGENT', '502 CARD_FETCH_FAILED']);

/** Requests slower than this are printed with the figures. */
const SLOW_MS = 5000;

/** A request that got a server error, a hang, or a hang-up it did not ask for. */
export interface Failure {
  endpoint: string;
  category: string;
  why: string;
  request: string;
}

/** Counts of one endpoint. */
export interface EndpointFigures {
  requests: number;
  /** By status (`200`, `404`, …) or fault (`closed`, `timeout`, `client`). */
  statuses: Record<string, number>;
  failures: number;
  maxMs: number;
  totalMs: number;
  /** The slowest request, described. */
  slowest?: string;
}

/** Every count of a run. */
export class Figures {
  readonly endpoints = new Map<string, EndpointFigures>();
  /** By kind of request, then by status or fault. */
  readonly categories = new Map<string, Record<string, number>>();
  /** 5xx answers counted as designed (see {@link DESIGNED_5XX}). */
  designed5xx = 0;
  /** 4xx replies that carried no `{error: CODE}` body (the HTTP parser's own, e.g. 431). */
  uncoded4xx = 0;
  failureCount = 0;
  /** The first failures, with their requests. */
  readonly failures: Failure[] = [];
  startedAt = performance.now();
  durationMs = 0;

  /** Counts one outcome; returns the failure, if it is one. */
  record(endpoint: string, req: FuzzRequest, out: Outcome): Failure | undefined {
    const ep = this.endpoints.get(endpoint) ?? {
      requests: 0,
      statuses: {},
      failures: 0,
      maxMs: 0,
      totalMs: 0,
    };
    this.endpoints.set(endpoint, ep);
    const key = out.status !== undefined ? String(out.status) : (out.fault ?? 'client');
    ep.requests += 1;
    ep.statuses[key] = (ep.statuses[key] ?? 0) + 1;
    if (out.ms > ep.maxMs) {
      ep.maxMs = out.ms;
      ep.slowest = `${describe(req)} → ${key}`;
    }
    ep.totalMs += out.ms;
    const cat = this.categories.get(req.category) ?? {};
    this.categories.set(req.category, cat);
    cat[key] = (cat[key] ?? 0) + 1;
    if (out.status !== undefined && out.status >= 400 && out.status < 500 && !out.code && !req.raw)
      this.uncoded4xx += 1;
    const why = judge(req, out);
    if (why === 'designed') {
      this.designed5xx += 1;
      return undefined;
    }
    if (!why) return undefined;
    ep.failures += 1;
    this.failureCount += 1;
    const failure = { endpoint, category: req.category, why, request: describe(req) };
    if (this.failures.length < 50) this.failures.push(failure);
    return failure;
  }

  get requests(): number {
    let n = 0;
    for (const ep of this.endpoints.values()) n += ep.requests;
    return n;
  }

  /** The status histogram of the whole run. */
  histogram(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const ep of this.endpoints.values())
      for (const [k, v] of Object.entries(ep.statuses)) out[k] = (out[k] ?? 0) + v;
    return out;
  }

  /** The figures as text: one line per endpoint, the histograms, then the failures. */
  format(title: string): string {
    const lines = [
      `${title}: ${this.requests} requests in ${(this.durationMs / 1000).toFixed(1)} s ` +
        `(${Math.round(this.requests / (this.durationMs / 1000))}/s), ${this.failureCount} failures, ` +
        `${this.designed5xx} designed 503 NO_AGENT, ${this.uncoded4xx} 4xx without an error code`,
      `status histogram: ${fmt(this.histogram())}`,
      '',
      'endpoint'.padEnd(58) + 'requests  fail mean ms max ms  statuses',
    ];
    for (const [key, ep] of [...this.endpoints].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(
        key.padEnd(58) +
          String(ep.requests).padStart(8) +
          String(ep.failures).padStart(6) +
          (ep.totalMs / ep.requests).toFixed(1).padStart(8) +
          String(Math.round(ep.maxMs)).padStart(7) +
          '  ' +
          fmt(ep.statuses),
      );
    const slow = [...this.endpoints].filter(([, ep]) => ep.maxMs > SLOW_MS);
    if (slow.length > 0)
      lines.push('', `slowest requests of the endpoints with one over ${SLOW_MS} ms:`);
    for (const [key, ep] of slow)
      lines.push(`  [${key}] ${Math.round(ep.maxMs)} ms: ${ep.slowest}`);
    lines.push('', 'by kind of request:');
    for (const [cat, h] of [...this.categories].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(`  ${cat.padEnd(30)} ${fmt(h)}`);
    if (this.failures.length > 0) {
      lines.push('', `first ${this.failures.length} failures:`);
      for (const f of this.failures)
        lines.push(`  [${f.endpoint}] ${f.category}: ${f.why}\n    ${f.request}`);
    }
    return lines.join('\n');
  }
}

/** Why an outcome is a failure, `'designed'` for an allowed 5xx, or undefined when it is fine. */
export function judge(req: FuzzRequest, out: Outcome): string | undefined {
  if (out.status !== undefined) {
    if (out.status < 500) return undefined;
    if (DESIGNED_5XX.has(`${out.status} ${out.code ?? ''}`)) return 'designed';
    return `${out.status} ${out.code ?? '(no error code)'}`;
  }
  if (out.fault === 'closed' && req.mayClose) return undefined;
  if (out.fault === 'timeout') return `no reply within ${Math.round(out.ms)} ms`;
  return `${out.fault ?? 'client'}${out.detail ? ` (${out.detail})` : ''} without a reply`;
}

/** A request in one line, long parts cut: enough to replay it by hand. */
export function describe(req: FuzzRequest): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);
  if (req.raw) return `raw bytes: ${JSON.stringify(cut(req.raw.toString('latin1'), 400))}`;
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `${k}: ${cut(JSON.stringify(v), 80)}`)
    .join('; ');
  const body = req.body ? ` body ${JSON.stringify(cut(req.body.toString('latin1'), 300))}` : '';
  return `${req.method} ${cut(req.target, 200)} [${headers}]${body}`;
}

function fmt(h: Record<string, number>): string {
  return Object.entries(h)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
}
