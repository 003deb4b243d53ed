/**
 * infra/k8s/base: every manifest against the Kubernetes schemas (kubernetes-models), then what a
 * schema cannot see — the variables the containers get are settings the services read, ports,
 * probes, selectors and the autoscaler agree with each other and with the services' defaults,
 * and the relays reach registry-sync through its Service.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
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
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
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
      spec: { containers: Container[]; securityContext?: { runAsNonRoot?: boolean } };
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
});
