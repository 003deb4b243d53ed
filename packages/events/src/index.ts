/**
 * @agent-reach/events — every task stage as a point in InfluxDB (`reach_task_events`), batched,
 * bounded and never blocking dispatch.
 * @packageDocumentation
 */
export {
  EVENT_STAGES,
  MAX_REASON_CHARS,
  MEASUREMENT,
  type EventSink,
  type EventSinkOptions,
  type EventSinkStats,
  type EventStage,
  type InfluxApi,
  type TaskEvent,
} from './types.ts';
export {
  compileEventSinkOptions,
  eventSinkOptionsFromEnv,
  type ResolvedEventSinkOptions,
} from './options.ts';
export { createEventSink } from './sink.ts';
export { eventToLine, InvalidTaskEventError, isInvalidTaskEventError } from './line.ts';
export {
  apiForVersion,
  detectInfluxApi,
  ensureDatabase,
  InfluxQueryError,
  isInfluxQueryError,
  queryInfluxQL,
  quoteIdentifier,
  writeLineProtocol,
  type InfluxQueryOptions,
  type InfluxWriteOptions,
} from './influxql.ts';
export {
  archivedTaskToLine,
  archiveNanos,
  cutJsonText,
  decodeArchivedTaskRow,
  InvalidArchivedTaskError,
  isInvalidArchivedTaskError,
  MAX_ARCHIVE_RECORD_BYTES,
  TASK_ARCHIVE_MEASUREMENT,
  taskArchiveEnabled,
  utf8Prefix,
  type ArchivedTaskPoint,
  type CutValue,
} from './archive.ts';
export { byStageTime } from './stage-order.ts';
