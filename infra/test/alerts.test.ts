/**
 * infra/prometheus/alerts.yaml: promtool accepts the rules and passes their unit tests
 * (alerts.test.yaml); each rule has a `for`, a severity, a summary, a description and a runbook
 * section that exists in docs/OPERATIONS.md; and Grafana's provisioned alert rules are the same
 * rules. test/e2e/alert-rules.test.ts checks the metrics they name against the services' /metrics.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './services.ts';

const DIR = join(ROOT, 'infra/prometheus');
const GRAFANA = join(ROOT, 'infra/compose/grafana/provisioning/alerting/agent-reach.yaml');

interface PromRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface GrafanaQuery {
  refId: string;
  datasourceUid: string;
  model: {
    expr?: string;
    type?: string;
    expression?: string;
    conditions?: { evaluator: { type: string; params: number[] } }[];
  };
}
interface GrafanaRule {
  uid: string;
  title: string;
  condition: string;
  data: GrafanaQuery[];
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const rules = (
  parse(readFileSync(join(DIR, 'alerts.yaml'), 'utf8')) as {
    groups: { rules: PromRule[] }[];
  }
).groups.flatMap((g) => g.rules);
const grafana = parse(readFileSync(GRAFANA, 'utf8')) as {
  apiVersion: number;
  groups: { name: string; folder: string; interval: string; rules: GrafanaRule[] }[];
};

const run = promisify(execFile);
/** promtool: $PROMTOOL, or the one on PATH (Debian's `prometheus` package, installed by npm test). */
const PROMTOOL = process.env.PROMTOOL || 'promtool';

async function promtool(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd: DIR });
    return { code: 0, out: stdout + stderr };
  } catch (err: unknown) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') {
      throw new Error(
        `${PROMTOOL} not found: install Debian's prometheus package (apt-get install prometheus; npm test does) or set PROMTOOL`,
        { cause: err },
      );
    }
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout}${e.stderr}` };
  }
}

/** `<query> > <n>` or `<query> < <n>`: every rule's top-level shape, which Grafana mirrors. */
function split(expr: string): { query: string; op: 'gt' | 'lt'; threshold: number } {
  const m = /^([\s\S]*\S)\s+([<>])\s+(-?\d+(?:\.\d+)?)$/.exec(expr.trim());
  if (!m) throw new Error(`not "<query> <op> <number>": ${expr}`);
  return { query: m[1]!, op: m[2] === '>' ? 'gt' : 'lt', threshold: Number(m[3]) };
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The headings' anchors of a Markdown file, as GitHub makes them. */
function anchors(file: string): Set<string> {
  return new Set(
    [...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

const scratch = mkdtempSync(join(tmpdir(), 'reach-alerts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('Prometheus alert rules', () => {
  it('pass promtool check rules', async () => {
    const { code, out } = await promtool('check', 'rules', 'alerts.yaml');
    expect(out, out).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(code).toBe(0);
  });

  it('fire on the series of their unit tests (promtool test rules)', async () => {
    const { code, out } = await promtool('test', 'rules', 'alerts.test.yaml');
    expect(code, out).toBe(0);
    expect(out).toContain('SUCCESS');
  });

  it('are refused by promtool when an expression does not parse (the check checks)', async () => {
    const bad = join(scratch, 'bad.yaml');
    writeFileSync(
      bad,
      'groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(reach_x_total[5m]) > 1\n',
    );
    const { code, out } = await promtool('check', 'rules', bad);
    expect(code).not.toBe(0);
    expect(out).toMatch(/FAILED|parse error/);
  });

  it('cover the receipt-timeout rate, failures by capability, OFFLINE and DEGRADED agents, DLQ growth, snapshot age and Redis', () => {
    const text = rules.map((r) => r.expr).join('\n');
    expect(text).toContain('reason="receipt_timeout"');
    expect(text).toMatch(/sum by \(capability\)[^\n]*stage="failed"/);
    expect(text).toContain('reach_agents{status="OFFLINE"}');
    expect(text).toContain('reach_agents{status="DEGRADED"}');
    expect(text).toContain('reach_dead_letters offset');
    expect(text).toContain('reach_router_snapshot_age_seconds');
    expect(text).toContain('reach_fleet_sample_ok');
    expect(text).toContain('outcome="STORE_UNAVAILABLE"');
    expect(text).toContain('reach_redis_errors_total');
  });

  const runbooks = anchors(join(ROOT, 'docs/OPERATIONS.md'));
  for (const rule of rules) {
    it(`${rule.alert}: for, severity, summary, description and a runbook section`, () => {
      expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
      const [file, anchor] = (rule.annotations?.runbook_url ?? '').split('#');
      expect(file).toBe('docs/OPERATIONS.md');
      expect([...runbooks]).toContain(anchor);
      split(rule.expr);
    });
  }
});

describe('Grafana alert rules (file provisioning)', () => {
  const byTitle = new Map(grafana.groups.flatMap((g) => g.rules).map((r) => [r.title, r]));

  it('are one group of the same rules, on the provisioned Prometheus datasource', () => {
    expect(grafana.apiVersion).toBe(1);
    expect([...byTitle.keys()]).toEqual(rules.map((r) => r.alert));
    const datasources = parse(
      readFileSync(
        join(ROOT, 'infra/compose/grafana/provisioning/datasources/prometheus.yaml'),
        'utf8',
      ),
    ) as { datasources: { uid: string; type: string }[] };
    expect(datasources.datasources).toEqual([
      expect.objectContaining({ uid: 'prometheus-reach', type: 'prometheus' }),
    ]);
    const uids = grafana.groups.flatMap((g) => g.rules.map((r) => r.uid));
    expect(new Set(uids).size).toBe(uids.length);
    for (const uid of uids) expect(uid).toMatch(/^[a-z0-9-]{1,40}$/);
  });

  for (const rule of rules) {
    it(`${rule.alert}: the same query, threshold, for, labels and annotations`, () => {
      const g = byTitle.get(rule.alert);
      expect(g, `no Grafana rule titled ${rule.alert}`).toBeDefined();
      const { query, op, threshold } = split(rule.expr);
      const a = g!.data.find((d) => d.refId === 'A')!;
      expect(a.datasourceUid).toBe('prometheus-reach');
      expect(squash(a.model.expr ?? '')).toBe(squash(query));
      const cond = g!.data.find((d) => d.refId === g!.condition)!;
      expect(cond.datasourceUid).toBe('__expr__');
      expect(cond.model).toMatchObject({ type: 'threshold', expression: 'A' });
      expect(cond.model.conditions?.[0]?.evaluator).toEqual({ type: op, params: [threshold] });
      expect(g!.for).toBe(rule.for);
      expect(g!.labels).toEqual(rule.labels);
      // Grafana's templates read a query's value as $values.A.Value, Prometheus's as $value.
      const same = Object.fromEntries(
        Object.entries(rule.annotations ?? {}).map(([k, v]) => [
          k,
          squash(v.replaceAll('$value', '$values.A.Value')),
        ]),
      );
      expect(
        Object.fromEntries(Object.entries(g!.annotations).map(([k, v]) => [k, squash(v)])),
      ).toEqual(same);
    });
  }
});
