import { Pool } from 'undici';
import type { ResultSink } from './caller.ts';
import type { Target } from './loops.ts';

/** Path every bench gateway serves: POST `{k}` → 200 `{r}` once the task is done. */
export const GATEWAY_PATH = '/task';

/**
 * The http-mode client of the BullMQ and floor gateways: one POST per task over a pool of
 * `connections`, answered with the result; `r` is when the worker started the task.
 */
export function gatewayTarget(
  url: string,
  connections: number,
  sink: ResultSink,
): { target: Target; close(): Promise<void> } {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const target: Target = {
    async submit(key) {
      const res = await pool.request({
        method: 'POST',
        path: GATEWAY_PATH,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ k: key }),
      });
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        throw new Error(`gateway answered ${res.statusCode}: ${text.slice(0, 200)}`);
      }
      const { r } = (await res.body.json()) as { r: number };
      sink.complete(key, r);
    },
  };
  return { target, close: () => pool.close() };
}
