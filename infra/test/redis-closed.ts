/**
 * What keeps Redis closed in the deployment files (issue 34): a compose Redis that asks for a
 * password read from a secret and is published on no host port, services that take the password
 * from a secret; Kubernetes containers that take the Redis credentials from a Secret. Each check
 * returns the problems it finds, empty when there are none, so a test can show that a document
 * left open is refused.
 */

/** A compose service, as far as these checks read it. */
export interface ComposeService {
  image?: string;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: Array<string | number | { target?: number; published?: string | number }>;
  secrets?: Array<string | { source: string }>;
}

/** A compose document, as far as these checks read it. */
export interface ComposeDocument {
  services: Record<string, ComposeService>;
  secrets?: Record<string, { file?: string; environment?: string; external?: boolean }>;
}

/** A command or entrypoint as one shell text, `$$` (compose's escape) read as `$`. */
const shellText = (v: string | string[] | undefined) =>
  (Array.isArray(v) ? v.join(' ') : (v ?? '')).replace(/\$\$/g, '$');

const mountedSecrets = (s: ComposeService) =>
  (s.secrets ?? []).map((x) => (typeof x === 'string' ? x : x.source));

/** The service's environment as name → value text, from either of compose's two forms. */
function environmentOf(s: ComposeService): Record<string, string> {
  const env = s.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(
      env.map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
      }),
    );
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v ?? '')]));
}

/**
 * The secrets `text` reads from /run/secrets that `service` mounts and the document declares;
 * any other path there does not exist in the container.
 */
function secretsRead(text: string, service: ComposeService, doc: ComposeDocument): string[] {
  const read = [...text.matchAll(/\/run\/secrets\/([\w.-]+)/g)].map((m) => m[1]!);
  return read.filter(
    (name) => mountedSecrets(service).includes(name) && doc.secrets?.[name] !== undefined,
  );
}

const isRedis = (s: ComposeService) => /^redis(:|@|$)/.test(s.image ?? '');

/** `redis://user:password@host`: a password written into the URL itself. */
const urlHasPassword = (url: string) => /^rediss?:\/\/[^/@]*:[^/@]+@/.test(url);

/**
 * Why the Redis of a compose document is not closed: a Redis service (image `redis`) that
 * publishes a host port, that starts without `--requirepass` (or `--aclfile`) fed from a secret it
 * mounts, or a replica without `--masterauth`; a service with REDIS_URL that carries a password
 * in the URL or its environment, or exports REDIS_PASSWORD from no secret it mounts.
 */
export function composeRedisProblems(doc: ComposeDocument): string[] {
  const problems: string[] = [];
  const services = Object.entries(doc.services);
  for (const [name, service] of services.filter(([, s]) => isRedis(s))) {
    if (service.ports?.length)
      problems.push(`${name}: publishes ${JSON.stringify(service.ports)} on the host`);
    const command = shellText(service.command);
    const auth = /--requirepass\s+(\S+)/.exec(command)?.[1];
    const aclFile = /--aclfile\s+(\S+)/.exec(command)?.[1];
    if (auth === undefined && aclFile === undefined)
      problems.push(`${name}: starts without --requirepass or --aclfile`);
    // The value a shell expands at start-up (`"$pass"`), never one written in the file.
    if (auth !== undefined && !/^"?\$/.test(auth))
      problems.push(`${name}: --requirepass is given a literal value`);
    if (
      (auth !== undefined || aclFile !== undefined) &&
      secretsRead(command, service, doc).length === 0
    )
      problems.push(`${name}: reads its password from no secret it mounts`);
    if (/--replicaof\s/.test(command) && !/--masterauth\s+"?\$/.test(command))
      problems.push(`${name}: a replica without --masterauth from the secret`);
  }
  for (const [name, service] of services.filter(([, s]) => !isRedis(s))) {
    const env = environmentOf(service);
    if (env['REDIS_URL'] === undefined) continue;
    if (urlHasPassword(env['REDIS_URL'])) problems.push(`${name}: REDIS_URL carries a password`);
    if (env['REDIS_PASSWORD'] !== undefined)
      problems.push(`${name}: REDIS_PASSWORD is set in its environment, not read from a secret`);
    const entrypoint = shellText(service.entrypoint);
    // `REDIS_PASSWORD="$(cat /run/secrets/<name>)"`, then `export REDIS_PASSWORD`.
    const exported = /REDIS_PASSWORD="?\$\(cat ([^\s)"]+)\)/.exec(entrypoint)?.[1] ?? '';
    if (
      secretsRead(exported, service, doc).length === 0 ||
      !/export REDIS_PASSWORD\b/.test(entrypoint)
    )
      problems.push(`${name}: takes REDIS_PASSWORD from no secret it mounts`);
  }
  return problems;
}

/** A Kubernetes container, as far as {@link k8sRedisProblems} reads it. */
export interface K8sContainer {
  name: string;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }>;
}

/** The Redis credentials the services read (docs/SETTINGS.md). */
export const REDIS_CREDENTIALS = ['REDIS_USERNAME', 'REDIS_PASSWORD'] as const;

/**
 * Why a container's Redis credentials are not kept in a Secret: REDIS_USERNAME or REDIS_PASSWORD
 * not taken from a `secretKeyRef`, or given as a literal value; either of them, or a REDIS_URL
 * with a password, in a ConfigMap it reads (`configMaps`: name → data).
 */
export function k8sRedisProblems(
  container: K8sContainer,
  configMaps: Record<string, Record<string, string>>,
): string[] {
  const problems: string[] = [];
  for (const variable of REDIS_CREDENTIALS) {
    const entries = (container.env ?? []).filter((e) => e.name === variable);
    if (entries.length !== 1 || !entries[0]?.valueFrom?.secretKeyRef)
      problems.push(`${container.name}: ${variable} is not taken from a secretKeyRef`);
    if (entries.some((e) => e.value !== undefined))
      problems.push(`${container.name}: ${variable} has a literal value`);
  }
  for (const from of container.envFrom ?? []) {
    const name = from.configMapRef?.name;
    const data = name === undefined ? undefined : configMaps[name];
    if (!data) continue;
    for (const variable of REDIS_CREDENTIALS)
      if (data[variable] !== undefined)
        problems.push(`${container.name}: ${variable} is in the ConfigMap ${name}`);
    if (data['REDIS_URL'] !== undefined && urlHasPassword(data['REDIS_URL']))
      problems.push(`${container.name}: REDIS_URL in the ConfigMap ${name} carries a password`);
  }
  return problems;
}
