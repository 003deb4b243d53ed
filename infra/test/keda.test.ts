/**
 * infra/k8s/components/keda: the ScaledObject against the openAPIV3Schema of KEDA's CRD (vendored
 * in infra/k8s/schema), the example agent against the Kubernetes schemas, then what neither schema
 * sees — the autoscaler targets that Deployment, its Prometheus queries name only the waiting
 * room's metrics and the agent's capability and compute what they should on sample series
 * (promtool), and it scales up at once and down slowly. No cluster runs it here.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './services.ts';

const DIR = join(ROOT, 'infra/k8s/components/keda');
const CRD = join(ROOT, 'infra/k8s/schema/keda.sh_scaledobjects.yaml');

/**
 * The waiting room's figures on registry-sync's /metrics (docs/ROUTING.md, Waiting room), labels
 * `capability` and `tenant`: the only metrics the ScaledObject's queries may name, so a rename
 * there fails here until the queries follow.
 */
const QUEUE_METRICS = [
  'reach_queue_waiting',
  'reach_queue_oldest_wait_seconds',
  'reach_queue_arrivals_total',
  'reach_queue_sent_total',
  'reach_queue_wait_seconds',
  'reach_queue_slot_share',
] as const;

/**
 * Trigger metadata KEDA's Prometheus scaler reads (pkg/scalers/prometheus_scaler.go of v2.20.2,
 * `prometheusMetadata`); the first three are required.
 */
const PROMETHEUS_METADATA = [
  'serverAddress',
  'query',
  'threshold',
  'activationThreshold',
  'queryParameters',
  'namespace',
  'customHeaders',
  'ignoreNullValues',
  'unsafeSsl',
  'awsRegion',
  'timeout',
  'identityOwner',
];

interface Trigger {
  type: string;
  name?: string;
  metricType?: string;
  metadata: Record<string, string>;
}
interface ScalingRules {
  stabilizationWindowSeconds?: number;
  policies?: Array<{ type: string; value: number; periodSeconds: number }>;
}
interface ScaledObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    scaleTargetRef: { apiVersion?: string; kind?: string; name: string };
    minReplicaCount?: number;
    maxReplicaCount?: number;
    pollingInterval?: number;
    cooldownPeriod?: number;
    advanced?: {
      horizontalPodAutoscalerConfig?: {
        behavior?: { scaleUp?: ScalingRules; scaleDown?: ScalingRules };
      };
    };
    triggers: Trigger[];
  };
}
interface AgentDeployment {
  kind: string;
  metadata: { name: string };
  spec: {
    replicas?: number;
    template: {
      spec: {
        containers: Array<{
          env?: Array<{
            name: string;
            value?: string;
            valueFrom?: { configMapKeyRef?: { name: string; key: string } };
          }>;
        }>;
      };
    };
  };
}

const read = (path: string): unknown => parse(readFileSync(path, 'utf8'));
const kustomization = read(join(DIR, 'kustomization.yaml')) as {
  kind: string;
  resources: string[];
};
const manifests = kustomization.resources.map((file) => read(join(DIR, file)) as { kind: string });
const scaledObject = manifests.find((m) => m.kind === 'ScaledObject') as ScaledObject;
const agent = manifests.find((m) => m.kind === 'Deployment') as AgentDeployment;
const agentEnv = agent.spec.template.spec.containers[0]?.env ?? [];

/**
 * Errors of a ScaledObject against the CRD's openAPIV3Schema, plus its one CEL rule
 * (`x-kubernetes-validations`), which only the API server evaluates.
 */
const scaledObjectErrors = (() => {
  const crd = read(CRD) as {
    spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: object } }> };
  };
  const version = crd.spec.versions.find((v) => v.name === 'v1alpha1')!;
  // Strict: a keyword or format a newer CRD brings fails here instead of being skipped.
  const ajv = new Ajv({ allErrors: true, strictTypes: false });
  ajv.addVocabulary([
    'x-kubernetes-int-or-string',
    'x-kubernetes-list-type',
    'x-kubernetes-validations',
  ]);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => !isNaN(Date.parse(s)) });
  const validate = ajv.compile(version.schema.openAPIV3Schema);
  return (doc: unknown): string[] => {
    const errors = validate(doc)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    const { spec } = doc as ScaledObject;
    // '!has(self.minReplicaCount) || self.minReplicaCount <= (has(self.maxReplicaCount) ? self.maxReplicaCount : 100)'
    if (spec.minReplicaCount !== undefined && spec.minReplicaCount > (spec.maxReplicaCount ?? 100))
      errors.push('/spec minReplicaCount must be less than or equal to maxReplicaCount');
    return errors;
  };
})();

/** The ScaledObject with `change` applied to a deep copy. */
function changed(change: (so: ScaledObject) => void): ScaledObject {
  const copy = structuredClone(scaledObject);
  change(copy);
  return copy;
}

const triggerNamed = (name: string) => scaledObject.spec.triggers.find((t) => t.name === name)!;
const envValue = (name: string) => agentEnv.find((e) => e.name === name)?.value;

describe('infra/k8s/components/keda', () => {
  it('is a component that lists every manifest of its directory', () => {
    expect(kustomization.kind).toBe('Component');
    const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(manifests.map((m) => m.kind).sort()).toEqual(['Deployment', 'ScaledObject']);
  });

  it('the ScaledObject is valid against the CRD schema of KEDA v2.20.2', () => {
    expect(scaledObject.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaledObjectErrors(scaledObject)).toEqual([]);
  });

  it('the schema refuses a trigger without a type, counts as strings, thresholds as numbers and min above max', () => {
    expect(
      scaledObjectErrors(
        changed((so) => {
          delete (so.spec.triggers[0] as Partial<Trigger>).type;
        }),
      ),
    ).toEqual(["/spec/triggers/0 must have required property 'type'"]);
    expect(
      scaledObjectErrors(
        changed((so) => {
          (so.spec as Record<string, unknown>)['minReplicaCount'] = '2';
        }),
      ),
    ).toEqual(['/spec/minReplicaCount must be integer']);
    expect(
      scaledObjectErrors(
        changed((so) => {
          (so.spec.triggers[1]!.metadata as Record<string, unknown>)['threshold'] = 10;
        }),
      ),
    ).toEqual(['/spec/triggers/1/metadata/threshold must be string']);
    expect(
      scaledObjectErrors(
        changed((so) => {
          so.spec.triggers = [];
          so.spec.maxReplicaCount = 0;
        }),
      ),
    ).toEqual([
      '/spec/maxReplicaCount must be >= 1',
      '/spec/triggers must NOT have fewer than 1 items',
      '/spec minReplicaCount must be less than or equal to maxReplicaCount',
    ]);
  });

  it('the example agent is valid against the Kubernetes schema and leaves the replica count to the autoscaler', () => {
    expect(() => new Deployment(agent as never).validate()).not.toThrow();
    expect(agent.spec.replicas).toBeUndefined();
    expect(scaledObject.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: agent.metadata.name,
    });
  });

  it('the agent reaches registry-sync through its Service and Redis through the common ConfigMap', () => {
    const base = join(ROOT, 'infra/k8s/base');
    const service = read(join(base, 'registry-sync-service.yaml')) as {
      metadata: { name: string };
      spec: { ports: Array<{ port: number }> };
    };
    const url = new URL(envValue('REACH_REGISTRY_URL')!);
    expect(url.hostname).toBe(service.metadata.name);
    expect(service.spec.ports.map((p) => p.port)).toContain(Number(url.port));
    const ref = agentEnv.find((e) => e.name === 'REDIS_URL')?.valueFrom?.configMapKeyRef;
    const common = read(join(base, 'common-configmap.yaml')) as {
      metadata: { name: string };
      data: Record<string, string>;
    };
    expect(ref?.name).toBe(common.metadata.name);
    expect(common.data).toHaveProperty(ref!.key);
  });

  it('has two Prometheus triggers on one server, with the metadata the scaler reads', () => {
    const { triggers } = scaledObject.spec;
    expect(triggers.map((t) => [t.type, t.name])).toEqual([
      ['prometheus', 'arrival-rate'],
      ['prometheus', 'oldest-wait'],
    ]);
    for (const t of triggers) {
      expect(PROMETHEUS_METADATA).toEqual(expect.arrayContaining(Object.keys(t.metadata)));
      expect(Number(t.metadata['threshold'])).toBeGreaterThan(0);
      expect(new URL(t.metadata['serverAddress']!).protocol).toMatch(/^https?:$/);
    }
    expect(new Set(triggers.map((t) => t.metadata['serverAddress'])).size).toBe(1);
    // Replicas = rate / per-replica rate; for the wait, replicas × age / target.
    expect(triggerNamed('arrival-rate').metricType).toBe('AverageValue');
    expect(triggerNamed('oldest-wait').metricType).toBe('Value');
  });

  it("queries only the waiting room's metrics, for the agent's capability", () => {
    const capability = envValue('REACH_CAPABILITY');
    expect(capability).toBeTruthy();
    const named = {
      'arrival-rate': ['reach_queue_arrivals_total'],
      'oldest-wait': ['reach_queue_oldest_wait_seconds'],
    };
    for (const [name, metrics] of Object.entries(named)) {
      const { query } = triggerNamed(name).metadata;
      // A metric is the name before a selector; `reach_…` anywhere else is one too.
      const selected = [...query!.matchAll(/([a-zA-Z_:][\w:]*)\s*\{/g)].map((m) => m[1]);
      const reach = query!.match(/\breach_\w+/g) ?? [];
      expect(selected, name).toEqual(metrics);
      expect(reach, name).toEqual(metrics);
      for (const metric of reach) expect(QUEUE_METRICS).toContain(metric);
      expect(
        [...query!.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]),
        name,
      ).toEqual([`capability="${capability}"`]);
    }
  });

  it('scales up at once and down slowly, from at least one replica', () => {
    const { spec } = scaledObject;
    const { scaleUp, scaleDown } = spec.advanced?.horizontalPodAutoscalerConfig?.behavior ?? {};
    expect(spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(spec.maxReplicaCount).toBeGreaterThan(spec.minReplicaCount!);
    expect(spec.pollingInterval).toBeLessThanOrEqual(30);
    expect(spec.cooldownPeriod).toBeGreaterThan(0);
    expect(scaleUp?.stabilizationWindowSeconds).toBe(0);
    expect(scaleDown?.stabilizationWindowSeconds).toBeGreaterThanOrEqual(300);
    // Pods a minute each way, at the present minimum.
    const perMinute = (rules: ScalingRules | undefined, pick: (...n: number[]) => number) =>
      pick(
        ...(rules?.policies ?? []).map(
          (p) =>
            ((p.type === 'Percent' ? (spec.minReplicaCount! * p.value) / 100 : p.value) * 60) /
            p.periodSeconds,
        ),
      );
    expect(perMinute(scaleDown, Math.max)).toBeLessThan(perMinute(scaleUp, Math.max) / 4);
  });

  describe('the queries, evaluated by promtool on sample series', () => {
    const run = promisify(execFile);
    const PROMTOOL = process.env.PROMTOOL || 'promtool';
    const tmp = mkdtempSync(join(tmpdir(), 'reach-keda-'));
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));

    it('sums the arrival rate over tenants, once whatever the instances, and takes the oldest wait, for the capability only', async () => {
      // [metric, capability, tenant, values a minute apart]. Tenant a 360 arrivals a minute
      // (6/s), tenant b 180 (3/s), another capability 6,000; every registry-sync instance reports
      // the same figures, read from Redis.
      const figures = [
        ['reach_queue_arrivals_total', 'summarize', 'a', '0+360x10'],
        ['reach_queue_arrivals_total', 'summarize', 'b', '0+180x10'],
        ['reach_queue_arrivals_total', 'embed', 'a', '0+6000x10'],
        ['reach_queue_oldest_wait_seconds', 'summarize', 'a', '30x10'],
        ['reach_queue_oldest_wait_seconds', 'summarize', 'b', '4x10'],
        ['reach_queue_oldest_wait_seconds', 'embed', 'a', '90x10'],
      ];
      const test = {
        rule_files: [],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: figures.flatMap(([metric, capability, tenant, values]) =>
              ['sync-1', 'sync-2'].map((instance) => ({
                series: `${metric}{capability="${capability}",tenant="${tenant}",instance="${instance}"}`,
                values,
              })),
            ),
            promql_expr_test: [
              { name: 'arrival-rate', value: 9 },
              { name: 'oldest-wait', value: 30 },
            ].map(({ name, value }) => ({
              expr: triggerNamed(name).metadata['query'],
              eval_time: '5m',
              exp_samples: [{ labels: '{}', value }],
            })),
          },
        ],
      };
      const file = join(tmp, 'queries.test.yaml');
      writeFileSync(file, stringify(test));
      try {
        await run(PROMTOOL, ['test', 'rules', file]);
      } catch (err: unknown) {
        const e = err as { code?: string; stdout?: string; stderr?: string };
        if (e.code === 'ENOENT') {
          throw new Error(
            `${PROMTOOL} not found: install Debian's prometheus package (npm test does) or set PROMTOOL`,
            { cause: err },
          );
        }
        throw new Error(`promtool test rules failed:\n${e.stdout}${e.stderr}`, { cause: err });
      }
    });
  });
});
