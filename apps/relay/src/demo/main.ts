/**
 * Runs one demo endpoint server as its own process:
 *
 *   node --import tsx apps/relay/src/demo/main.ts --kind a2a|http|mcp [--port 0] [--host 127.0.0.1]
 *
 * Once listening it writes `{"url": "<its URL>"}` as one line on stdout, then one line
 * `{"cancelled": "<id>"}` per call it sees stop early. SIGTERM or SIGINT closes it.
 */
import { parseArgs } from 'node:util';
import {
  startA2AServer,
  startHttpServer,
  startMcpServer,
  type DemoServerOptions,
} from './index.ts';

const STARTERS = { a2a: startA2AServer, http: startHttpServer, mcp: startMcpServer } as const;

/** One JSON line on stdout: how the process talks to whoever started it. */
function say(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kind: { type: 'string' },
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  const kind = values.kind;
  if (kind !== 'a2a' && kind !== 'http' && kind !== 'mcp')
    throw new Error('--kind must be a2a, http or mcp');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port: 0–65535');
  const options: DemoServerOptions = {
    port,
    host: values.host,
    onCancel: (id) => say({ cancelled: id }),
  };
  const server = await STARTERS[kind](options);
  say({ url: server.url });
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
