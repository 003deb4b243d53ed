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
  env?: NodeJS.ProcessEnv;
}

let starting: Promise<boolean> | undefined;

/**
 * Loads the OpenTelemetry SDK and starts exporting spans over OTLP/HTTP, when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; resolves false
 * (having loaded nothing) when neither is. Once per process: later calls share the first one's
 * provider, whatever name they give.
 */
export function startTracing(o: TracingStartOptions): Promise<boolean> {
  const env = o.env ?? process.env;
  if (!otlpConfigured(env)) return Promise.resolve(false);
  starting ??= import('./otel.ts').then(
    ({ otelSpanFactory }) => {
      const name = (env.OTEL_SERVICE_NAME ?? '').trim() || o.serviceName;
      installSpanFactory(otelSpanFactory(name));
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

/** Exports the spans ended so far (an agent's stop calls this; other agents may still run). */
export async function flushTracing(): Promise<void> {
  await spanFactory()?.flush();
}

/** Exports what is left and stops tracing (a service's graceful shutdown calls this last). */
export async function stopTracing(): Promise<void> {
  const f = spanFactory();
  if (f === undefined) return;
  installSpanFactory(undefined);
  starting = undefined;
  await f.shutdown();
}
