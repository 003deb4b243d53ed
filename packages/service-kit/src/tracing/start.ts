import type { Logger } from 'pino';
import { installSpanFactory, spanFactory } from './spans.ts';

/** The environment variables that turn span export on (either one). */
export const OTLP_ENDPOINT_VARS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
] as const;

/** True when `env` names an OTLP endpoint for traces. */
export function otlpConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return OTLP_ENDPOINT_VARS.some((name) => (env[name] ?? '').trim() !== '');
}

/** What `startTracing` needs. */
export interface TracingStartOptions {
  /** `service.name` of the spans when `OTEL_SERVICE_NAME` is not set. */
  serviceName: string;
  logger?: Logger;
  /**
   * Where to look for the endpoint variables that turn tracing on. @default process.env
   * (the exporter and the batch processor read their settings from process.env themselves)
   */
  env?: NodeJS.ProcessEnv;
}

let starting: Promise<boolean> | undefined;
let startLogger: Logger | undefined;

/**
 * Loads the OpenTelemetry SDK and starts exporting spans over OTLP/HTTP, when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; resolves false
 * (having loaded nothing) when neither is. Once per process: later calls share the first one's
 * provider, whatever name they give.
 */
export function startTracing(o: TracingStartOptions): Promise<boolean> {
  const env = o.env ?? process.env;
  if (!otlpConfigured(env)) return Promise.resolve(false);
  startLogger ??= o.logger;
  starting ??= import('./otel.ts').then(
    ({ otelSpanFactory }) => {
      const name = (env.OTEL_SERVICE_NAME ?? '').trim() || o.serviceName;
      installSpanFactory(otelSpanFactory(name, o.logger));
      o.logger?.info({ service_name: name }, 'exporting trace spans over OTLP/HTTP');
      return true;
    },
    (err: unknown) => {
      o.logger?.error({ err }, 'OpenTelemetry SDK not loaded; no spans are exported');
      return false;
    },
  );
  return starting;
}

/** How long a stop or an agent's close waits for the last spans' export. */
const EXPORT_WAIT_MS = 3000;

/**
 * Exports the spans ended so far (an agent's close calls this; other agents may still run).
 * Never rejects, and waits {@link EXPORT_WAIT_MS} at most: a collector that cannot be reached is
 * retried for seconds, and the spans it did not take are logged as lost.
 */
export async function flushTracing(): Promise<void> {
  const f = spanFactory();
  if (f !== undefined) await exported(f.flush());
}

/** Exports what is left and stops tracing (a service's graceful shutdown calls this last); as flushTracing. */
export async function stopTracing(): Promise<void> {
  const f = spanFactory();
  if (f === undefined) return;
  installSpanFactory(undefined);
  starting = undefined;
  await exported(f.shutdown());
}

async function exported(done: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), EXPORT_WAIT_MS);
  });
  try {
    if ((await Promise.race([done, gaveUp])) === 'timeout')
      startLogger?.warn({ timeout_ms: EXPORT_WAIT_MS }, 'trace spans not exported in time');
  } catch (err: unknown) {
    startLogger?.warn({ err }, 'trace spans not exported');
  } finally {
    clearTimeout(timer);
  }
}
