import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where a demo server listens. */
export interface DemoServerOptions {
  /** 0 for any free port. @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /**
   * Called when the server sees a call stop before it answered: a cancel it was sent, or its
   * client gone. The argument names the call (per server: an idempotency key, a context id, a
   * request id).
   */
  onCancel?: (id: string) => void;
}

/** A running demo server. */
export interface DemoServer {
  /** Its base URL, e.g. `http://127.0.0.1:43210`. */
  url: string;
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

/** Starts `server` listening and returns its URL and a close that drops open connections. */
export async function listen(server: Server, options: DemoServerOptions): Promise<DemoServer> {
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
