/**
 * infra/k8s/base: every manifest against the Kubernetes schemas (kubernetes-models), then what a
 * schema cannot see — the variables the containers get are settings the services read, ports,
 * probes, selectors and the autoscaler agree with each other and with the services' defaults.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { authOf, portOf, roleOf, ROOT, unreadVariables, type ApiRole } from './services.ts';

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
  resources?: { requests?: { cpu?: string; memory?: string } };
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

  it('runs both services, 3 routers and 2 registry-sync, from the image the kustomization sets', () => {
    const roles = deployments.map((d) => roleOf(d.spec.template.spec.containers[0]?.args));
    expect(roles.sort()).toEqual(['registry-sync', 'router']);
    const replicas = Object.fromEntries(
      deployments.map((d) => [roleOf(d.spec.template.spec.containers[0]?.args), d.spec.replicas]),
    );
    expect(replicas).toEqual({ router: 3, 'registry-sync': 2 });
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers) {
        expect(kustomization.images.map((i) => i.name)).toContain(c.image);
      }
      expect(d.spec.template.spec.securityContext?.runAsNonRoot).toBe(true);
    }
  });

  for (const role of ['router', 'registry-sync'] as ApiRole[]) {
    describe(role, () => {
      const d = deployments.find((x) => roleOf(x.spec.template.spec.containers[0]?.args) === role)!;
      const c = d.spec.template.spec.containers[0]!;
      const env = envOf(c);

      it('sets only variables the service reads, with values it accepts', () => {
        expect(unreadVariables(role, env)).toEqual([]);
        expect(env['HOST']).toBe('0.0.0.0');
      });

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

      it('declares the port the service listens on, probed for readiness on /healthz and liveness on /livez', () => {
        const port = portOf(role, env);
        expect(c.ports).toEqual([{ name: 'http', containerPort: port }]);
        expect(c.readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(c.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
      });

      it('requests CPU and memory', () => {
        expect(c.resources?.requests?.cpu).toBeTruthy();
        expect(c.resources?.requests?.memory).toBeTruthy();
      });

      it('has a Service and a PodDisruptionBudget that select its pods', () => {
        const labels = d.spec.template.metadata.labels;
        expect(labels).toMatchObject(d.spec.selector.matchLabels);
        const selects = (selector: Record<string, string>) =>
          Object.entries(selector).every(([k, v]) => labels[k] === v);
        const services = ofKind<
          Manifest & {
            spec: {
              selector: Record<string, string>;
              ports: Array<{ name: string; port: number; targetPort: string }>;
            };
          }
        >('Service').filter((s) => selects(s.spec.selector));
        expect(services).toHaveLength(1);
        expect(services[0]!.spec.ports).toEqual([
          { name: 'http', port: portOf(role, env), targetPort: 'http' },
        ]);
        const pdbs = ofKind<
          Manifest & { spec: { selector: { matchLabels: Record<string, string> } } }
        >('PodDisruptionBudget').filter((p) => selects(p.spec.selector.matchLabels));
        expect(pdbs).toHaveLength(1);
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
