/**
 * infra/compose/compose.yaml: valid against the Compose specification's JSON schema (vendored in
 * infra/compose/schema), then what the schema cannot see — the services get only settings they
 * read, nginx forwards to the ports they listen on, the relays reach registry-sync through it,
 * the files it mounts exist.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  API_ROLES,
  authOf,
  portOf,
  relayOptionsOf,
  roleOf,
  ROOT,
  unreadVariables,
  type Role,
} from './services.ts';

const DIR = join(ROOT, 'infra/compose');
const text = readFileSync(join(DIR, 'compose.yaml'), 'utf8');
// `merge: true`: the `<<` keys that share the services' settings, as Compose reads them.
const compose = parse(text, { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};

interface Service {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  profiles?: string[];
  depends_on?: Record<string, { condition?: string }>;
  deploy?: { replicas?: number };
}

/** `${NAME:-default}` → default: the value Compose uses when NAME is not set. */
// `${X:-default}` gives its default; `${X:?message}` (a variable the operator must set) a
// stand-in value of 64 characters, as `openssl rand -hex 32` makes.
const interpolate = (value: string) =>
  value
    .replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')
    .replace(/\$\{[A-Z_]+:\?[^}]*\}/g, 'f'.repeat(64))
    .replace(/\$\$/g, '$');

const nginx = readFileSync(join(DIR, 'nginx.conf'), 'utf8');

/** The compose service that runs `role`, and the environment it starts with. */
function serviceOf(role: Role) {
  const [name, service] = Object.entries(compose.services).find(
    ([, s]) => roleOf(s.command) === role,
  )!;
  const env = Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
  );
  return { name, service, env };
}

describe('infra/compose/compose.yaml', () => {
  it('is valid against the Compose specification', () => {
    // It names the draft-07 meta-schema by its https address, which Ajv knows by its http one:
    // left out, draft-07 is Ajv's default. `deprecated`, a later draft's keyword, needs strict off.
    const { $schema: _, ...schema } = JSON.parse(
      readFileSync(join(DIR, 'schema/compose-spec.json'), 'utf8'),
    ) as { $schema: string };
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    // Compose resolves anchors and `<<` merges before it validates: so does this.
    const ok = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('runs 3 routers, 2 registry-sync and 2 relays from the image, Redis, InfluxDB 2, Grafana and nginx', () => {
    const counts: Record<string, number> = {};
    for (const service of Object.values(compose.services)) {
      const role = roleOf(service.command);
      if (role) counts[role] = service.deploy?.replicas ?? 1;
    }
    expect(counts).toEqual({ router: 3, 'registry-sync': 2, relay: 2 });
    const images = Object.values(compose.services)
      .filter((s) => !s.profiles)
      .map((s) => s.image?.split(':')[0]);
    expect(images).toEqual(
      expect.arrayContaining(['redis', 'influxdb', 'grafana/grafana', 'nginx', 'agent-reach']),
    );
    expect(compose.services['influxdb']?.image).toMatch(/^influxdb:2\./);
  });

  for (const role of API_ROLES) {
    describe(role, () => {
      const { name, service, env } = serviceOf(role);

      it('sets only variables the service reads, with values it accepts', () => {
        expect(unreadVariables(role, env)).toEqual([]);
        expect(env['REDIS_URL']).toBe('redis://redis:6379');
      });

      it('listens on every address with API keys required, and starts', () => {
        expect(env['HOST']).toBe('0.0.0.0');
        expect(authOf(role, env)).toEqual({ required: true });
        const { REACH_ADMIN_KEY: _, ...without } = env;
        expect(() => authOf(role, without)).toThrow(/REACH_ADMIN_KEY must be set/);
      });

      it('is reached through nginx on the port it listens on, published on the host', () => {
        const port = portOf(role, env);
        expect(nginx).toContain(`server ${name}:${port} `);
        expect(nginx).toMatch(new RegExp(`listen ${port};`));
        expect(compose.services['nginx']?.ports).toContain(`${port}:${port}`);
        // Replicas share the service's name: no host port of their own to collide on.
        expect(service.ports).toBeUndefined();
      });
    });
  }

  describe('relay', () => {
    const { name, service, env } = serviceOf('relay');
    const registry = serviceOf('registry-sync');

    it('sets only variables the relay reads, with values it accepts, and starts', () => {
      expect(unreadVariables('relay', env)).toEqual([]);
      expect(env['HOST']).toBe('0.0.0.0');
      expect(env['RELAY_PORT']).toBe(String(portOf('relay')));
      expect(() => relayOptionsOf(env)).not.toThrow();
    });

    it('works on the Redis keys of the other services', () => {
      for (const setting of ['REDIS_URL', 'REACH_PREFIX'])
        expect(env[setting], setting).toBe(registry.env[setting]);
    });

    it('calls registry-sync through nginx, once registry-sync is healthy', () => {
      const url = new URL(relayOptionsOf(env).registryUrl);
      const port = portOf('registry-sync', registry.env);
      expect(url.hostname).toBe('nginx');
      expect(Number(url.port)).toBe(port);
      expect(nginx).toMatch(new RegExp(`listen ${port};`));
      expect(nginx).toContain(`server ${registry.name}:${port} `);
      expect(service.depends_on?.[registry.name]).toEqual({ condition: 'service_healthy' });
      expect(service.depends_on?.['nginx']).toBeDefined();
    });

    it('needs a relay key from the environment, and no admin key', () => {
      expect(service.environment?.['REACH_RELAY_KEY']).toMatch(/^\$\{REACH_RELAY_KEY:\?.+\}$/);
      expect(env).not.toHaveProperty('REACH_ADMIN_KEY');
    });

    it('is behind no nginx and publishes no port: nothing calls a relay', () => {
      expect(nginx).not.toContain(`server ${name}:`);
      expect(service.ports).toBeUndefined();
    });
  });

  it('writes events with the token InfluxDB is set up with, to the bucket it creates', () => {
    const influx = compose.services['influxdb']!.environment!;
    for (const role of API_ROLES) {
      const env = Object.values(compose.services).find(
        (s) => roleOf(s.command) === role,
      )!.environment!;
      expect(env['INFLUX_TOKEN']).toBe(influx['DOCKER_INFLUXDB_INIT_ADMIN_TOKEN']);
      expect(env['INFLUX_ORG']).toBe(influx['DOCKER_INFLUXDB_INIT_ORG']);
      expect(env['INFLUX_BUCKET']).toBe(influx['DOCKER_INFLUXDB_INIT_BUCKET']);
    }
  });

  it('keeps every acknowledged write on disk in Redis (append-only, fsync always)', () => {
    const command = compose.services['redis']!.command!.join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--appendfsync always');
  });

  it('mounts files that exist, and provisions the dashboard with the datasource it names', () => {
    for (const service of Object.values(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(resolve(DIR, source)), source).toBe(true);
        else expect(Object.keys(compose.volumes)).toContain(source);
      }
    }
    const datasource = readFileSync(
      join(DIR, 'grafana/provisioning/datasources/influxdb.yaml'),
      'utf8',
    );
    const uid = /uid: (\S+)/.exec(datasource)?.[1];
    const entrypoint = compose.services['grafana']!.entrypoint!.join(' ');
    expect(entrypoint).toContain(`/${uid}/g`);
    const dashboard = readFileSync(join(ROOT, 'infra/grafana/agent-reach.json'), 'utf8');
    expect(dashboard).toContain('${DS_INFLUXDB}');
  });
});
