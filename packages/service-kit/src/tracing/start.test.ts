import { describe, expect, it } from 'vitest';
import { otlpConfigured, startTracing } from './start.ts';
import { startSpan, tracing } from './spans.ts';

describe('tracing start', () => {
  it('is on only when an OTLP endpoint for traces is named', () => {
    expect(otlpConfigured({})).toBe(false);
    expect(otlpConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(otlpConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(otlpConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(
      true,
    );
  });

  it('loads nothing and starts no span without one', async () => {
    expect(await startTracing({ serviceName: 'test', env: {} })).toBe(false);
    expect(tracing.on).toBe(false);
    // A span asked for anyway is a no-op with no traceparent to carry.
    expect(startSpan('x').traceparent).toBe('');
  });
});
