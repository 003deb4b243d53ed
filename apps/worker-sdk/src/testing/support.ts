/** Shared helpers of the SDK's integration tests. */
import { fieldsToRecord } from '@agent-reach/protocol';
import { testServices } from '@agent-reach/testkit';
import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';

/** The Redis of this test run: `REDIS_URL`, else the one the global setup started. */
export function redisUrl(): string {
  const fromEnv = process.env['REDIS_URL'];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : testServices().redisUrl;
}

/** A logger for tests: silent unless `LOG_LEVEL` is set. */
export function testLogger(): Logger {
  return pino({ level: process.env['LOG_LEVEL'] ?? 'silent' });
}

/** One JSON log line as pino writes it. */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A debug-level logger that keeps its lines, for tests that check what is logged and how loudly. */
export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}

/** One stream entry with its fields as a record. */
export interface EntryRecord {
  id: string;
  fields: Record<string, string>;
}

/** Every entry of a stream, oldest first. */
export async function readStream(redis: Redis, key: string): Promise<EntryRecord[]> {
  const entries = await redis.xrange(key, '-', '+');
  return entries.map(([id, fields]) => ({ id, fields: fieldsToRecord(fields) }));
}

/** Number of entries read from `stream` by `group` and not yet XACKed. */
export async function pendingCount(redis: Redis, stream: string, group: string): Promise<number> {
  const summary = (await redis.xpending(stream, group)) as [number, ...unknown[]];
  return summary[0];
}

/** A promise a test opens by hand: handlers wait on it to stay in flight. */
export class Gate {
  readonly promise: Promise<void>;
  open!: () => void;
  constructor() {
    this.promise = new Promise((resolve) => (this.open = resolve));
  }
}
