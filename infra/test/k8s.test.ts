/**
 * infra/k8s/base: every manifest against the Kubernetes schemas (kubernetes-models), then what a
 * schema cannot see — the variables the containers get are settings the services read, ports,
 * probes, selectors and the autoscaler agree with each other and with the services' defaults,
 * the relays reach registry-sync through its Service, and the Redis credentials and TLS files
 * come from Secrets (infra/k8s/components wire the TLS files in).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { redisExtrasFromEnv, redisOptionsFor } from '@agent-reach/service-kit';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { k8sRedisProblems, REDIS_CREDENTIALS, type K8sContainer } from './redis-closed.ts';
import {
  authOf,
  isApiRole,
  portOf,
  relayOptionsOf,
  roleOf,
  ROLES,
  ROOT,
  unreadVariables,
} from './services.ts';

const BASE = join(ROOT, 'infra/k8s/base');
const COMPONENTS = join(ROOT, 'infra/k8s/components');
/** Where every Deployment mounts the Secret agent-reach-redis-tls. */
const REDIS_TLS_DIR = '/etc/agent-reach/redis-tls';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface Container {
  name: string;
  image: string;
  args?: string[];
  ports: Array<{ name: string; containerPort: number }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: {
    requests?: { cpu?: string; memory?: string };
    limits?: { memory?: string };
  };
}

interface Deployment extends Manifest {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        containers: Container[];
        securityContext?: { runAsNonRoot?: boolean };
        volumes?: Array<{
          name: string;
          secret?: { secretName: string; optional?: boolean };
        }>;
      };
    };
  };
}

const kustomization = parse(readFileSync(join(BASE, 'kustomization.yaml'), 'utf8')) as {
  resources: string[];
  images: Array<{ name: string }>;
};
const manifests = kustomization.resources.map(
  (file) => parse(readFileSync(join(BASE, file), 'utf8')) as Manifest,
);
const ofKind = <T extends Manifest>(kind: string) =>
  manifests.filter((m) => m.kind === kind) as T[];
const deployments = ofKind<Deployment>('Deployment');
const configMaps = ofKind<Manifest & { data: Record<string, string> }>('ConfigMap');
type ServiceManifest = Manifest & {
  spec: {
    selector: Record<string, string>;
    ports: Array<{ name: string; port: number; targetPort: string }>;
  };
};
const services = ofKind<ServiceManifest>('Service');
/** The base's ConfigMaps: name → data. */
const configMapData = Object.fromEntries(configMaps.map((m) => [m.metadata.name, m.data]));

/** The Deployment that runs `role`, its one container, and the environment it starts with. */
function deploymentOf(role: string) {
  const d = deployments.find((x) => roleOf(x.spec.template.spec.containers[0]?.args) === role)!;
  const c = d.spec.template.spec.containers[0]!;
  return { d, c, env: envOf(c) };
}

/** A memory quantity (`512Mi`, `1Gi`) in MiB. */
const mebibytes = (q: string) => Number.parseFloat(q) * (q.endsWith('Gi') ? 1024 : 1);

/** The kubernetes-models class for a manifest: `apps/v1` Deployment → apps/v1/Deployment. */
async function modelOf(m: Manifest) {
  const [group, version] = m.apiVersion.includes('/')
    ? m.apiVersion.split('/')
    : ['', m.apiVersion];
  const path = `kubernetes-models/${group ? `${group}/` : ''}${version}/${m.kind}`;
  const mod = (await import(path)) as Record<string, new (data: unknown) => { validate(): void }>;
  return mod[m.kind]!;
}

/** The environment a container starts with: its ConfigMaps, then its own variables. */
function envOf(c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    const cm = configMaps.find((m) => m.metadata.name === from.configMapRef?.name);
    if (!cm) throw new Error(`${c.name}: envFrom names no ConfigMap of the base`);
    Object.assign(env, cm.data);
  }
  // A value from a Secret: a placeholder, since only the variable's name is known here.
  for (const e of c.env ?? []) env[e.name] = e.value ?? 'from-a-secret';
  return env;
}

describe('infra/k8s/base', () => {
  it('lists every manifest of the directory in kustomization.yaml', () => {
    const files = readdirSync(BASE).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });

  it('every manifest is valid against the Kubernetes schema of its kind', async () => {
    for (const m of manifests) {
      const Model = await modelOf(m);
      expect(() => new Model(m).validate(), `${m.kind} ${m.metadata.name}`).not.toThrow();
    }
  });

  it('runs the three services, 3 routers, 2 registry-sync and 2 relays, from the image the kustomization sets', () => {
    const roles = deployments.map((d) => roleOf(d.spec.template.spec.containers[0]?.args));
    expect(roles.sort()).toEqual([...ROLES].sort());
    const replicas = Object.fromEntries(
      deployments.map((d) => [roleOf(d.spec.template.spec.containers[0]?.args), d.spec.replicas]),
    );
    expect(replicas).toEqual({ router: 3, 'registry-sync': 2, relay: 2 });
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers) {
        expect(kustomization.images.map((i) => i.name)).toContain(c.image);
      }
      expect(d.spec.template.spec.securityContext?.runAsNonRoot).toBe(true);
    }
  });

  it('points every service at one Redis and one key prefix', () => {
    const shared = ROLES.map((role) => {
      const { env } = deploymentOf(role);
      return { REDIS_URL: env['REDIS_URL'], REACH_PREFIX: env['REACH_PREFIX'] };
    });
    expect(shared[0]?.REDIS_URL).toBeTruthy();
    for (const one of shared) expect(one).toEqual(shared[0]);
  });

  for (const role of ROLES) {
    describe(role, () => {
      const { d, c, env } = deploymentOf(role);
      const labels = d.spec.template.metadata.labels;
      const selects = (selector: Record<string, string>) =>
        Object.entries(selector).every(([k, v]) => labels[k] === v);

      it('sets only variables the service reads, with values it accepts', () => {
        expect(unreadVariables(role, env)).toEqual([]);
        expect(env['HOST']).toBe('0.0.0.0');
      });

      if (isApiRole(role)) {
        it('requires API keys, with the admin key from a Secret', () => {
          expect(env['REACH_AUTH']).toBe('required');
          const admin = c.env?.find((e) => e.name === 'REACH_ADMIN_KEY');
          expect(admin?.valueFrom).toEqual({
            secretKeyRef: { name: 'agent-reach-admin', key: 'REACH_ADMIN_KEY' },
          });
          expect(authOf(role, { ...env, REACH_ADMIN_KEY: 'f'.repeat(64) })).toEqual({
            required: true,
          });
        });
      } else {
        it('calls registry-sync through its Service, with a relay key from a Secret', () => {
          const url = new URL(relayOptionsOf(env).registryUrl);
          const registry = deploymentOf('registry-sync');
          const service = services.find((s) => s.metadata.name === url.hostname);
          expect(service?.spec.selector).toEqual(registry.d.spec.selector.matchLabels);
          expect(service?.spec.ports.map((p) => p.port)).toContain(Number(url.port));
          const key = c.env?.find((e) => e.name === 'REACH_RELAY_KEY');
          expect(key?.valueFrom).toEqual({
            secretKeyRef: { name: 'agent-reach-relay', key: 'REACH_RELAY_KEY' },
          });
          expect(env).not.toHaveProperty('REACH_ADMIN_KEY');
        });
      }

      it('declares the port the service listens on, probed for readiness on /healthz and liveness on /livez', () => {
        const port = portOf(role, env);
        expect(c.ports).toEqual([{ name: 'http', containerPort: port }]);
        expect(c.readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
      });

      it('requests CPU and memory, and caps memory above the request', () => {
        const { requests, limits } = c.resources ?? {};
        expect(requests?.cpu).toBeTruthy();
        expect(mebibytes(limits!.memory!)).toBeGreaterThan(mebibytes(requests!.memory!));
        // A relay serving about 1,000 endpoint agents stays under 300 MiB (docs/DEPLOY.md).
        if (role === 'relay') expect(mebibytes(limits!.memory!)).toBeGreaterThan(300);
      });

      it(`has a PodDisruptionBudget that selects its pods${isApiRole(role) ? ', and a Service' : ''}`, () => {
        expect(labels).toMatchObject(d.spec.selector.matchLabels);
        const pdbs = ofKind<
          Manifest & { spec: { selector: { matchLabels: Record<string, string> } } }
        >('PodDisruptionBudget').filter((p) => selects(p.spec.selector.matchLabels));
        expect(pdbs).toHaveLength(1);
        const mine = services.filter((s) => selects(s.spec.selector));
        if (!isApiRole(role)) {
          // Nothing calls a relay.
          expect(mine).toEqual([]);
          return;
        }
        expect(mine).toHaveLength(1);
        expect(mine[0]!.spec.ports).toEqual([
          { name: 'http', port: portOf(role, env), targetPort: 'http' },
        ]);
      });
    });
  }

  it('scales the routers on CPU, from their replica count up', () => {
    const [hpa] = ofKind<
      Manifest & {
        spec: {
          scaleTargetRef: { apiVersion: string; kind: string; name: string };
          minReplicas: number;
          maxReplicas: number;
          metrics: Array<{ type: string; resource?: { name: string } }>;
        };
      }
    >('HorizontalPodAutoscaler');
    const router = deployments.find(
      (d) => roleOf(d.spec.template.spec.containers[0]?.args) === 'router',
    )!;
    expect(hpa?.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: router.metadata.name,
    });
    expect(hpa?.spec.metrics.map((m) => m.resource?.name)).toEqual(['cpu']);
    expect(hpa?.spec.minReplicas).toBe(router.spec.replicas);
    expect(hpa!.spec.maxReplicas).toBeGreaterThan(hpa!.spec.minReplicas);
  });

  describe('Redis credentials and TLS files', () => {
    interface Component {
      kind: string;
      patches: Array<{ path: string }>;
    }
    /** A component of infra/k8s/components, and the ConfigMap data its patches set. */
    function componentOf(name: string) {
      const dir = join(COMPONENTS, name);
      const component = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Component;
      const data: Record<string, Record<string, string>> = {};
      for (const { path } of component.patches) {
        const patch = parse(readFileSync(join(dir, path), 'utf8')) as Manifest & {
          data: Record<string, string>;
        };
        expect(patch.kind, `${name}/${path}`).toBe('ConfigMap');
        data[patch.metadata.name] = { ...data[patch.metadata.name], ...patch.data };
      }
      return { component, data };
    }

    for (const role of ROLES) {
      it(`${role} takes REDIS_USERNAME and REDIS_PASSWORD from the Secret agent-reach-redis`, () => {
        const { c, env } = deploymentOf(role);
        expect(k8sRedisProblems(c, configMapData)).toEqual([]);
        for (const variable of REDIS_CREDENTIALS) {
          const entry = c.env?.find((e) => e.name === variable);
          expect(entry?.valueFrom?.secretKeyRef).toEqual({
            name: 'agent-reach-redis',
            key: variable,
            optional: true,
          });
        }
        // Read by the service, and no TLS file named while REDIS_URL is redis://.
        expect(unreadVariables(role, env)).toEqual([]);
        expect(Object.keys(env).filter((k) => k.startsWith('REDIS_TLS_'))).toEqual([]);
      });

      it(`${role} mounts the optional Secret agent-reach-redis-tls, read-only`, () => {
        const { d, c } = deploymentOf(role);
        const mount = c.volumeMounts?.find((m) => m.mountPath === REDIS_TLS_DIR);
        expect(mount?.readOnly).toBe(true);
        const volume = d.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
        expect(volume?.secret).toEqual({ secretName: 'agent-reach-redis-tls', optional: true });
      });
    }

    it('refuses a container with a literal credential, one left out, or a ConfigMap that holds one', () => {
      const { c } = deploymentOf('router');
      const literal: K8sContainer = {
        ...c,
        env: [
          ...(c.env ?? []).filter((e) => e.name !== 'REDIS_PASSWORD'),
          { name: 'REDIS_PASSWORD', value: 'hunter2' },
        ],
      };
      expect(k8sRedisProblems(literal, configMapData)).toEqual([
        'router: REDIS_PASSWORD is not taken from a secretKeyRef',
        'router: REDIS_PASSWORD has a literal value',
      ]);
      const without: K8sContainer = {
        ...c,
        env: (c.env ?? []).filter((e) => e.name !== 'REDIS_USERNAME'),
      };
      expect(k8sRedisProblems(without, configMapData)).toEqual([
        'router: REDIS_USERNAME is not taken from a secretKeyRef',
      ]);
      const inConfigMap = {
        ...configMapData,
        'agent-reach-common': {
          ...configMapData['agent-reach-common'],
          REDIS_URL: 'redis://reach:hunter2@redis:6379',
          REDIS_PASSWORD: 'hunter2',
        },
      };
      expect(k8sRedisProblems(c, inConfigMap)).toEqual([
        'router: REDIS_PASSWORD is in the ConfigMap agent-reach-common',
        'router: REDIS_URL in the ConfigMap agent-reach-common carries a password',
      ]);
    });

    it('has components that point REDIS_TLS_* at the files of the mounted Secret', () => {
      // keda: autoscaling of agents, checked in keda.test.ts.
      expect(readdirSync(COMPONENTS).sort()).toEqual(['keda', 'redis-client-cert', 'redis-tls']);
      const files = { REDIS_TLS_CA: 'ca.crt', REDIS_TLS_CERT: 'tls.crt', REDIS_TLS_KEY: 'tls.key' };
      const set: Record<string, string> = {};
      for (const name of ['redis-tls', 'redis-client-cert']) {
        const { component, data } = componentOf(name);
        expect(component.kind).toBe('Component');
        // The ConfigMap all three services read.
        expect(Object.keys(data)).toEqual(['agent-reach-common']);
        Object.assign(set, data['agent-reach-common']);
      }
      expect(set).toEqual(
        Object.fromEntries(Object.entries(files).map(([k, f]) => [k, `${REDIS_TLS_DIR}/${f}`])),
      );
    });

    it("the services accept the components' settings, with a rediss:// URL only", () => {
      const ca = componentOf('redis-tls').data['agent-reach-common'];
      const pair = componentOf('redis-client-cert').data['agent-reach-common'];
      for (const role of ROLES) {
        const { env } = deploymentOf(role);
        const tls = { ...env, ...ca, ...pair };
        // One at a time (REDIS_TLS_CERT and REDIS_TLS_KEY only go together: read below).
        expect(unreadVariables(role, { ...env, ...ca, REDIS_URL: 'rediss://redis:6380' })).toEqual(
          [],
        );
        const extras = redisExtrasFromEnv(tls);
        expect(extras).toMatchObject({
          tlsCaFile: `${REDIS_TLS_DIR}/ca.crt`,
          tlsCertFile: `${REDIS_TLS_DIR}/tls.crt`,
          tlsKeyFile: `${REDIS_TLS_DIR}/tls.key`,
        });
        // What the overlay changes with them: TLS files with redis:// stop the service; with
        // rediss:// it reads them (absent here, so it names the first).
        expect(() => redisOptionsFor({ url: env['REDIS_URL']!, ...extras })).toThrow(
          /use rediss:\/\//,
        );
        expect(() => redisOptionsFor({ url: 'rediss://redis:6380', ...extras })).toThrow(
          `REDIS_TLS_CA=${REDIS_TLS_DIR}/ca.crt cannot be read`,
        );
      }
    });
  });
});
