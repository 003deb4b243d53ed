/**
 * @agent-reach/analytics — reads `reach_task_events` back out of InfluxDB: the four figures every
 * dashboard shows and a task's timeline, with the very query files shipped in
 * infra/influxdb/queries (docs/OBSERVABILITY.md).
 * @packageDocumentation
 */
export {
  API_QUERIES,
  CHART_QUERIES,
  QUERIES_DIR,
  QUERY_NAMES,
  loadQuery,
  queryText,
  regexLiteral,
  renderQuery,
  stringLiteral,
  type QueryName,
  type QueryVars,
} from './queries.ts';
export {
  InvalidWindowError,
  isInvalidWindowError,
  MAX_WINDOW_S,
  parseWindow,
  timeFilter,
  WINDOW_PATTERN,
  type Window,
} from './window.ts';
export { influxSourceFrom, queryStatements, type InfluxSource, type Row } from './influx-source.ts';
export {
  fourFigures,
  fourFiguresStatements,
  type FourFigures,
  type FourFiguresOptions,
  type GroupBy,
} from './four-figures.ts';
export {
  influxTaskTimeline,
  taskTimelineStatement,
  timelineFromInflux,
  type InfluxTaskTimeline,
  withGaps,
  type InfluxTimelineOptions,
  type StageRecord,
} from './timeline.ts';
export { FigureGroup, LatencyFigure, StatsReply, TimelineReply, TimelineStage } from './schemas.ts';
