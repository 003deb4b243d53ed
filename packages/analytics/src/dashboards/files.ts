import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { grafanaDashboard } from './grafana.ts';
import { influxdb2Template } from './influxdb2.ts';

/** Where the generated dashboards are shipped. */
export const DASHBOARD_FILES = {
  grafana: fileURLToPath(new URL('../../../../infra/grafana/agent-reach.json', import.meta.url)),
  influxdb2: fileURLToPath(
    new URL('../../../../infra/influxdb/dashboard-template.json', import.meta.url),
  ),
} as const;

/** The text each dashboard file must hold: the generated JSON, two-space indented, with a final newline. */
export function dashboardTexts(): Record<keyof typeof DASHBOARD_FILES, string> {
  return {
    grafana: `${JSON.stringify(grafanaDashboard(), null, 2)}\n`,
    influxdb2: `${JSON.stringify(influxdb2Template(), null, 2)}\n`,
  };
}

/** Rewrites the shipped dashboards from the query files; returns the paths that changed. */
export function writeDashboards(): string[] {
  const changed: string[] = [];
  const texts = dashboardTexts();
  for (const key of Object.keys(DASHBOARD_FILES) as Array<keyof typeof DASHBOARD_FILES>) {
    const path = DASHBOARD_FILES[key];
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // Missing: written below.
    }
    if (current !== texts[key]) {
      writeFileSync(path, texts[key]);
      changed.push(path);
    }
  }
  return changed;
}
