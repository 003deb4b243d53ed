import { createServer, connect, type Socket } from 'node:net';

/** A TCP proxy for fault injection between a client and a server on 127.0.0.1. */
export interface TcpProxy {
  port: number;
  /**
   * The next time a client sends bytes containing `marker`, forward them to the server, swallow
   * the server's reply and drop that client connection — the "reply lost on a dropped
   * connection" fault after which a client such as ioredis re-sends the command.
   */
  dropReplyOnce(marker: string): Promise<void>;
  /** Connections the proxy dropped on purpose so far. */
  dropped(): number;
  /**
   * What clients sent since the last call, one buffer per read (kept only with `record`): the
   * bytes of one client write arrive together on 127.0.0.1, so a buffer shows what left the
   * client in one write.
   */
  takeSent(): Buffer[];
  close(): Promise<void>;
}

/**
 * Starts a proxy on a free port that forwards to `127.0.0.1:targetPort`; `record` keeps what
 * clients send for {@link TcpProxy.takeSent}; `delayMs` holds what clients send that long
 * before passing it on, in order (a slow link, or a client that is slow to write).
 */
export async function startTcpProxy(
  targetPort: number,
  opts: { record?: boolean; delayMs?: number } = {},
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let armed: { marker: string; done: () => void } | undefined;
  let dropped = 0;
  let sent: Buffer[] = [];
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let swallow = false;
    client.on('data', (chunk: Buffer) => {
      if (opts.record) sent.push(chunk);
      if (armed && chunk.includes(armed.marker)) {
        const { done } = armed;
        armed = undefined;
        swallow = true;
        upstream.write(chunk);
        // Let the server execute the command, then cut the client off without its reply.
        setTimeout(() => {
          dropped++;
          client.destroy();
          upstream.destroy();
          done();
        }, 50);
        return;
      }
      if (opts.delayMs) setTimeout(() => upstream.write(chunk), opts.delayMs);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!swallow) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    dropReplyOnce: (marker) => new Promise<void>((resolve) => (armed = { marker, done: resolve })),
    dropped: () => dropped,
    takeSent: () => {
      const taken = sent;
      sent = [];
      return taken;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
