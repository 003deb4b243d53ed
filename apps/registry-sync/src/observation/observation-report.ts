import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import {
  compareResults,
  decodeShadowSettings,
  TaskRecordField as T,
  type FullAgentView,
  type ObservationReport,
  type ReachKeys,
  type ShadowCompare,
  type ShadowRecord,
} from '@agent-reach/protocol';
import type { ShadowResults } from './shadow-results.ts';

/** Disagreements a report shows (the newest). */
const SAMPLE = 10;

/** The serving side of one mirrored task, from its record. */
interface Served {
  status: string;
  agentId: string;
  durationMs: number | undefined;
  result: string | undefined;
}

const FIELDS = [T.status, T.agentId, T.durationMs, T.result] as const;

/** The q-quantile of sorted values (nearest rank); null for none. */
function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

function side(ok: boolean[], durations: number[]) {
  const sorted = [...durations].sort((a, b) => a - b);
  return {
    tasks: ok.length,
    success_rate: ok.length === 0 ? null : ok.filter(Boolean).length / ok.length,
    p50_ms: quantile(sorted, 0.5),
    p95_ms: quantile(sorted, 0.95),
  };
}

function parse(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * An observing agent's report (`GET /v1/agents/:agent_id/observation`, docs/PROTOCOL.md §7): its
 * kept shadow results against the same tasks as their serving agents finished them — success
 * rate and p50/p95 of the handler's time on each side, and how often the results agree, by the
 * capability's comparison (whole JSON, or its paths). A task still running, or whose record has
 * expired, is counted as mirrored but not compared.
 */
export class ObservationReporter {
  constructor(
    private readonly o: { redis: RedisClient; keys: ReachKeys; shadows: ShadowResults },
  ) {}

  async report(view: FullAgentView): Promise<ObservationReport> {
    const { redis, keys } = this.o;
    const records = await this.o.shadows.list(view.agent_id);
    const reads = slotPipeline(redis);
    for (const r of records)
      reads.add(keys.task(r.task_id), (p) => p.hmget(keys.task(r.task_id), ...FIELDS));
    const replies = records.length > 0 ? await reads.exec() : [];
    const compares = await this.compareSettings(records);
    const observerOk: boolean[] = [];
    const observerMs: number[] = [];
    const servingOk: boolean[] = [];
    const servingMs: number[] = [];
    let bothDone = 0;
    let agreed = 0;
    const disagreements: ObservationReport['disagreements'] = [];
    records.forEach((record, i) => {
      const served = this.served(replies[i]);
      if (!served || (served.status !== 'completed' && served.status !== 'dead')) return;
      observerOk.push(record.ok);
      if (record.duration_ms !== undefined) observerMs.push(record.duration_ms);
      servingOk.push(served.status === 'completed');
      if (served.durationMs !== undefined) servingMs.push(served.durationMs);
      if (!record.ok || served.status !== 'completed') return;
      bothDone++;
      const observed = parse(record.result);
      const result = parse(served.result);
      const c = record.truncated
        ? { agree: false, differing: [] }
        : compareResults(observed, result, compares.get(record.capability));
      if (c.agree) agreed++;
      else if (disagreements.length < SAMPLE)
        disagreements.push({
          task_id: record.task_id,
          capability: record.capability,
          serving_agent: served.agentId,
          differing: c.differing,
          observed,
          served: result,
        });
    });
    const oldest = records[records.length - 1];
    return {
      agent_id: view.agent_id,
      observe: view.observe,
      capabilities: view.capabilities,
      mirrored: records.length,
      compared: observerOk.length,
      observer: side(observerOk, observerMs),
      serving: side(servingOk, servingMs),
      agreement_rate: bothDone === 0 ? null : agreed / bothDone,
      disagreements,
      since: oldest ? oldest.at : null,
    };
  }

  private served(reply: [Error | null, unknown] | undefined): Served | undefined {
    if (!reply || reply[0] || !Array.isArray(reply[1])) return undefined;
    const [status, agentId, duration, result] = reply[1] as (string | null)[];
    if (!status) return undefined;
    const d = Number(duration);
    return {
      status,
      agentId: agentId ?? '',
      durationMs: duration !== null && Number.isFinite(d) ? d : undefined,
      result: result ?? undefined,
    };
  }

  /** The comparison of each capability the records name, as set now. */
  private async compareSettings(records: ShadowRecord[]): Promise<Map<string, ShadowCompare>> {
    const out = new Map<string, ShadowCompare>();
    const capabilities = [...new Set(records.map((r) => r.capability).filter(Boolean))];
    if (capabilities.length === 0) return out;
    const texts = await this.o.redis.hmget(this.o.keys.shadowSettings(), ...capabilities);
    capabilities.forEach((c, i) => {
      const s = decodeShadowSettings(texts[i]);
      if (s?.compare) out.set(c, s.compare);
    });
    return out;
  }
}
