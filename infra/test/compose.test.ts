/**
 * infra/compose/compose.yaml: valid against the Compose specification's JSON schema (vendored in
 * infra/compose/schema), then what the schema cannot see — the services get only settings they
 * read, nginx forwards to the ports they listen on, the relays reach registry-sync through it,
 * the files it mounts exist, and Redis stays closed: a password from a secret, no host port.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { composeRedisProblems } from './redis-closed.ts';
import {
  API_ROLES,
  authOf,
  portOf,
  relayOptionsOf,
  roleOf,
  ROLES,
  ROOT,
  unreadVariables,
  type Role,
} from './services.ts';

const DIR = join(ROOT, 'infra/compose');
const text = readFileSync(join(DIR, 'compose.yaml'), 'utf8');
// `merge: true`: the `<<` keys that share the services' settings, as Compose reads them.
const compose = parse(text, { merge: true }) as Compose;

interface Compose {
  services: Record<string, Service>;
  networks?: { default?: { ipam?: { config?: { subnet?: string }[] } } };
  volumes: Record<string, unknown>;
  secrets?: Record<string, { file?: string }>;
}

interface Service {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  profiles?: string[];
  secrets?: string[];
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition?: string }>;
  deploy?: { replicas?: number };
  networks?: { default?: { ipv4_address?: string } };
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

/** The compose schema's validator (vendored in infra/compose/schema). */
function composeValidator() {
  // It names the draft-07 meta-schema by its https address, which Ajv knows by its http one:
  // left out, draft-07 is Ajv's default. `deprecated`, a later draft's keyword, needs strict off.
  const { $schema: _, ...schema } = JSON.parse(
    readFileSync(join(DIR, 'schema/compose-spec.json'), 'utf8'),
  ) as { $schema: string };
  return new Ajv({ strict: false, allErrors: true }).compile(schema);
}

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
    const validate = composeValidator();
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

  it('trusts X-Forwarded-For from nginx alone, at the fixed address it has in the stack network', () => {
    const address = compose.services['nginx']!.networks?.default?.ipv4_address;
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const subnet = compose.networks?.default?.ipam?.config?.[0]?.subnet ?? '';
    // A /24 holding the address: its first three octets.
    expect(subnet).toBe(`${address!.split('.').slice(0, 3).join('.')}.0/24`);
    for (const role of API_ROLES)
      expect(serviceOf(role).env['REACH_TRUSTED_PROXIES']).toBe(address);
    // nginx appends the peer's address, which the services take as the client's.
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
  });

  it('keeps every acknowledged write on disk in Redis (append-only, fsync always)', () => {
    const command = compose.services['redis']!.command!.join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--appendfsync always');
  });

  describe('Redis stays closed', () => {
    const redis = compose.services['redis']!;
    /** A copy of the document with `change` made to it, for the check to judge. */
    const changed = (change: (copy: Compose) => void) => {
      const copy = structuredClone(compose);
      change(copy);
      return copy;
    };

    it('asks for a password read from a secret, on no host port, and the services read it from the same secret', () => {
      expect(composeRedisProblems(compose)).toEqual([]);
      const secret = Object.keys(compose.secrets ?? {});
      expect(secret).toEqual(['redis_password']);
      expect(redis.ports).toBeUndefined();
      expect(redis.secrets).toEqual(secret);
      expect(redis.command!.join(' ')).toContain('--requirepass "$$pass"');
      // The health check logs in too: without a password Redis answers NOAUTH, not PONG.
      expect(redis.healthcheck?.test?.join(' ')).toContain(
        'REDISCLI_AUTH="$$(cat /run/secrets/redis_password)"',
      );
      for (const role of ROLES) {
        const { name, service, env } = serviceOf(role);
        expect(service.secrets, name).toEqual(secret);
        expect(env['REDIS_URL'], name).toBe('redis://redis:6379');
        // What the entrypoint exports is a setting the service reads.
        expect(unreadVariables(role, { REDIS_PASSWORD: 'f'.repeat(64) })).toEqual([]);
      }
    });

    it('refuses a copy whose Redis is published on the host', () => {
      const open = changed((c) => (c.services['redis']!.ports = ['6379:6379']));
      expect(composeRedisProblems(open)).toEqual(['redis: publishes ["6379:6379"] on the host']);
    });

    it('refuses a copy whose Redis starts without a password, or with one written in the file', () => {
      const command = redis.command!;
      const without = changed(
        (c) =>
          (c.services['redis']!.command = command.map((part) =>
            part.replace(/--requirepass \S+/, ''),
          )),
      );
      expect(composeRedisProblems(without)).toEqual([
        'redis: starts without --requirepass or --aclfile',
      ]);
      const literal = changed(
        (c) =>
          (c.services['redis']!.command = ['redis-server', '--requirepass', 'hunter2-hunter2']),
      );
      expect(composeRedisProblems(literal)).toEqual([
        'redis: --requirepass is given a literal value',
        'redis: reads its password from no secret it mounts',
      ]);
      const unmounted = changed((c) => delete c.services['redis']!.secrets);
      expect(composeRedisProblems(unmounted)).toEqual([
        'redis: reads its password from no secret it mounts',
      ]);
    });

    it('refuses a copy whose replica does not log in to the primary', () => {
      const replica = changed((c) => {
        const r = c.services['redis-replica']!;
        r.command = r.command!.map((part) => part.replace(/--masterauth \S+/, ''));
      });
      expect(composeRedisProblems(replica)).toEqual([
        'redis-replica: a replica without --masterauth from the secret',
      ]);
    });

    it('refuses a copy whose services carry the password in their environment or URL, or mount no secret', () => {
      const router = serviceOf('router').name;
      const inEnv = changed((c) => {
        c.services[router]!.environment!['REDIS_PASSWORD'] = '${REDIS_PASSWORD:?set it}';
        c.services[router]!.environment!['REDIS_URL'] = 'redis://:hunter2@redis:6379';
      });
      expect(composeRedisProblems(inEnv)).toEqual([
        `${router}: REDIS_URL carries a password`,
        `${router}: REDIS_PASSWORD is set in its environment, not read from a secret`,
      ]);
      const unmounted = changed((c) => delete c.services[router]!.secrets);
      expect(composeRedisProblems(unmounted)).toEqual([
        `${router}: takes REDIS_PASSWORD from no secret it mounts`,
      ]);
      const plain = changed((c) => delete c.services[router]!.entrypoint);
      expect(composeRedisProblems(plain)).toEqual([
        `${router}: takes REDIS_PASSWORD from no secret it mounts`,
      ]);
    });

    it('reads the secret, then runs the entrypoint of the image with the command of the service', () => {
      const dockerfile = readFileSync(join(ROOT, 'infra/docker/Dockerfile'), 'utf8');
      const image = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
      for (const role of ROLES) {
        const { service } = serviceOf(role);
        const [shell, flag, script] = service.entrypoint!;
        expect([shell, flag]).toEqual(['sh', '-c']);
        expect(script).toMatch(new RegExp(`exec ${image.join(' ')} "\\$\\$@"$`));
      }
    });

    it('keeps the password file out of git, and publishes Redis only on loopback when asked', () => {
      const file = compose.secrets?.['redis_password']?.file;
      expect(file).toBe('./secrets/redis-password');
      const ignored = readFileSync(join(DIR, 'secrets/.gitignore'), 'utf8').split('\n');
      expect(ignored).toContain('*');
      const hostText = readFileSync(join(DIR, 'compose.redis-host.yaml'), 'utf8');
      const host = parse(hostText) as { services: Record<string, Service> };
      const validate = composeValidator();
      expect(validate(host), JSON.stringify(validate.errors)).toBe(true);
      expect(Object.keys(host.services)).toEqual(['redis']);
      const ports = host.services['redis']!.ports!;
      expect(ports.length).toBeGreaterThan(0);
      for (const port of ports) expect(port).toMatch(/^127\.0\.0\.1:/);
      // Merged (Compose appends lists), the check sees the opt-in and nothing else.
      const merged = changed((c) => (c.services['redis']!.ports = ports));
      expect(composeRedisProblems(merged)).toEqual([
        `redis: publishes ${JSON.stringify(ports)} on the host`,
      ]);
    });
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
