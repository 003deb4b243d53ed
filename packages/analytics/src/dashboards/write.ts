/**
 * `npm run dashboards -w @agent-reach/analytics`: regenerates infra/grafana/agent-reach.json and
 * infra/influxdb/dashboard-template.json from the query files. Run it after editing a query;
 * a test fails while the shipped dashboards differ from what this writes.
 */
import { writeDashboards } from './files.ts';

const changed = writeDashboards();
process.stdout.write(
  changed.length > 0
    ? `updated:\n${changed.map((p) => `  ${p}`).join('\n')}\n`
    : 'dashboards are up to date\n',
);
