import { join } from 'node:path';
import { findBinary, freePort, startLoadBalancer } from '@agent-reach/process-kit';
import { forgetPid, recordPid } from '../proc/pidfiles.ts';

/** nginx in front of a system's routers, as `npm start -- --cluster` runs it. */
export interface RouterBalancer {
  /** Where callers and agents send their requests. */
  url: string;
  pid: number;
  /** Stops nginx (SIGTERM, then SIGKILL); idempotent. */
  stop(): Promise<void>;
  /** SIGKILLs nginx at once. */
  killNow(): void;
}

/**
 * Starts nginx (process-kit's startLoadBalancer: least connections, a refused connection or a 502
 * goes to the next router) on a free port in front of the routers on `ports`, its files in
 * `<sessionDir>/<name>/`, its pid recorded in the session folder so a later run stops a leftover.
 */
export async function startRouterBalancer(opts: {
  name: string;
  sessionDir: string;
  ports: readonly number[];
}): Promise<RouterBalancer> {
  const bin = findBinary('nginx');
  if (!bin) throw new Error('nginx not found on PATH; install it: apt-get install nginx-light');
  const port = await freePort();
  const proc = await startLoadBalancer({
    name: opts.name,
    bin,
    dir: join(opts.sessionDir, opts.name),
    fronts: [{ name: 'routers', port, upstreamPorts: opts.ports }],
  });
  await recordPid(opts.sessionDir, opts.name, proc.pid, 'nginx');
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid,
    stop: () =>
      (stopping ??= (async () => {
        await proc.stop('SIGTERM', 5000);
        await forgetPid(opts.sessionDir, opts.name);
      })()),
    killNow: () => {
      try {
        proc.kill('SIGKILL');
      } catch {
        // gone
      }
    },
  };
}
