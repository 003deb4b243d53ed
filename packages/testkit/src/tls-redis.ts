import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import {
  awaitReady,
  freePort,
  requireBinaries,
  spawnManaged,
  type ManagedProcess,
} from '@agent-reach/process-kit';

const run = promisify(execFile);

/** PEM files made by {@link makeTlsFiles}: a CA, a server certificate and a client certificate. */
export interface TlsFiles {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/**
 * Makes a throw-away CA and, signed by it, a server certificate for 127.0.0.1/localhost and a
 * client certificate, with the `openssl` command, in a new temp folder.
 */
export async function makeTlsFiles(): Promise<TlsFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'reach-tls-'));
  const f = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl('genrsa', '-out', f('ca.key'), '2048');
  await openssl(
    'req', '-x509', '-new', '-nodes', '-key', f('ca.key'), '-sha256', '-days', '2',
    '-subj', '/CN=reach-test-ca', '-out', f('ca.pem'),
  ); // prettier-ignore
  await writeFile(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  for (const who of ['server', 'client']) {
    await openssl('genrsa', '-out', f(`${who}.key`), '2048');
    await openssl(
      'req', '-new', '-key', f(`${who}.key`), '-subj', `/CN=reach-test-${who}`,
      '-out', f(`${who}.csr`),
    ); // prettier-ignore
    await openssl(
      'x509', '-req', '-in', f(`${who}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'),
      '-CAcreateserial', '-days', '2', '-sha256', '-out', f(`${who}.pem`),
      ...(who === 'server' ? ['-extfile', f('server.ext')] : []),
    ); // prettier-ignore
  }
  return {
    dir,
    ca: f('ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
  };
}

/** A redis-server that speaks only TLS (client certificates required) and only to an ACL user. */
export interface TlsRedis {
  /** `rediss://127.0.0.1:<port>` (no credentials: they go in REDIS_USERNAME/REDIS_PASSWORD). */
  url: string;
  port: number;
  files: TlsFiles;
  username: string;
  password: string;
  /** The environment a service needs to reach it. */
  env: Record<string, string>;
  /** The client side of TLS: the CA, the client certificate and its key (PEM). */
  tls: { ca: Buffer; cert: Buffer; key: Buffer };
  /** A client with the right certificates and credentials, for the test itself (lazy: call connect()). */
  connect(): Redis;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server --port 0 --tls-port <free port>` with certificates made by
 * {@link makeTlsFiles} (`tls-auth-clients yes`), the `default` user off and one ACL user
 * with a random password.
 */
export async function startTlsRedis(): Promise<TlsRedis> {
  const { 'redis-server': bin } = requireBinaries(['redis-server']);
  const files = await makeTlsFiles();
  const port = await freePort();
  const username = 'reach-svc';
  const password = `pw-${Math.random().toString(36).slice(2)}${Date.now()}`;
  // A config file rather than arguments: `user` lines take several words.
  const conf = join(files.dir, 'redis.conf');
  await writeFile(
    conf,
    [
      'port 0',
      `tls-port ${port}`,
      'bind 127.0.0.1',
      `tls-cert-file ${files.serverCert}`,
      `tls-key-file ${files.serverKey}`,
      `tls-ca-cert-file ${files.ca}`,
      'tls-auth-clients yes',
      `dir ${files.dir}`,
      'save ""',
      'appendonly no',
      'user default off',
      `user ${username} on >${password} ~* &* +@all`,
      '',
    ].join('\n'),
  );
  const proc: ManagedProcess = await spawnManaged({
    name: 'redis-server-tls',
    command: bin,
    args: [conf],
    cwd: files.dir,
  });
  const tls = async () => ({
    ca: await readFile(files.ca),
    cert: await readFile(files.clientCert),
    key: await readFile(files.clientKey),
  });
  const tlsOptions = await tls();
  const connect = () =>
    new Redis({ host: '127.0.0.1', port, username, password, tls: tlsOptions, lazyConnect: true });
  const ping = async (): Promise<boolean> => {
    const probe = connect();
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  };
  try {
    await awaitReady(proc, `answering PING over TLS on 127.0.0.1:${port}`, ping, 15_000);
  } catch (err: unknown) {
    await proc.stop('SIGKILL');
    await rm(files.dir, { recursive: true, force: true });
    throw err;
  }
  const url = `rediss://127.0.0.1:${port}`;
  return {
    url,
    port,
    files,
    username,
    password,
    env: {
      REDIS_URL: url,
      REDIS_TLS_CA: files.ca,
      REDIS_TLS_CERT: files.clientCert,
      REDIS_TLS_KEY: files.clientKey,
      REDIS_USERNAME: username,
      REDIS_PASSWORD: password,
    },
    tls: tlsOptions,
    connect,
    async stop() {
      await proc.stop('SIGTERM').catch(() => undefined);
      await rm(files.dir, { recursive: true, force: true });
    },
  };
}
