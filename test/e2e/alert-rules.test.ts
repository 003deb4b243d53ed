/**
 * Every metric the alert rules name (infra/prometheus/alerts.yaml and Grafana's copy) is one a
 * router or a registry-sync started on a real Redis exports on /metrics: a rule on a misspelt
 * or removed metric would never fire. infra/test/alerts.test.ts checks the rules themselves.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.ts';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

const prometheusRules = (
  parse(read('infra/prometheus/alerts.yaml')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  }
).groups.flatMap((g) => g.rules.map((r) => ({ name: r.alert, expr: r.expr })));
const grafanaRules = (
  parse(read('infra/compose/grafana/provisioning/alerting/agent-reach.yaml')) as {
    groups: { rules: { title: string; data: { model: { expr?: string } }[] }[] }[];
  }
).groups.flatMap((g) =>
  g.rules.flatMap((r) =>
    r.data.flatMap((d) =>
      d.model.expr ? [{ name: `grafana ${r.title}`, expr: d.model.expr }] : [],
    ),
  ),
);

/** PromQL words that look like identifiers but are not metric names. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: identifiers that are not functions (followed by
 * `(`), keywords, label names (inside `{…}` or a `by (…)` / `on (…)` list), strings, durations
 * or numbers.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(?!\w)(\s*\()?/g)) {
    const word = m[1]!;
    if (m[2] || KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names].sort();
}

/** Every series name /metrics can show: a histogram's `_bucket`, `_count`, `_sum` too. */
function exported(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_count', '_sum']) names.add(name + s);
    if (type === 'summary') for (const s of ['_count', '_sum']) names.add(name + s);
  }
  for (const m of text.matchAll(/^([a-zA-Z_:][\w:]*)[{ ]/gm)) names.add(m[1]!);
  return names;
}

describe('metricNames', () => {
  it('finds the metrics of an expression and nothing else', () => {
    expect(
      metricNames(
        '(sum by (capability) (rate(reach_a_total{stage="failed",x=~"a|b"}[10m])) / sum(rate(reach_b_count[5m] offset 15m)) and on (capability) max(reach_c{status="OFFLINE"}) >= 10) > 0.2 or vector(1e3)',
      ),
    ).toEqual(['reach_a_total', 'reach_b_count', 'reach_c']);
    expect(metricNames('max(reach_dead_letters) - max(reach_dead_letters offset 15m) > 0')).toEqual(
      ['reach_dead_letters'],
    );
  });
});

describe('the alert rules name only metrics the services export', () => {
  let stack: Stack;
  let names: Set<string>;

  beforeAll(async () => {
    stack = await startStack({ influx: 'v1' });
    names = new Set<string>();
    for (const url of [stack.routerUrl, stack.registryUrl]) {
      const res = await fetch(`${url}/metrics`);
      expect(res.status).toBe(200);
      for (const name of exported(await res.text())) names.add(name);
    }
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('reads both services’ metrics', () => {
    expect(names).toContain('reach_router_snapshot_age_seconds');
    expect(names).toContain('reach_task_retries_total');
    expect(names).toContain('reach_redis_errors_total');
    expect(names).toContain('reach_task_stage_latency_seconds_count');
  });

  for (const rule of [...prometheusRules, ...grafanaRules]) {
    it(rule.name, () => {
      const used = metricNames(rule.expr);
      expect(used.length, `no metric found in ${rule.expr}`).toBeGreaterThan(0);
      expect(used.filter((n) => !names.has(n))).toEqual([]);
    });
  }
});
