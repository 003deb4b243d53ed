// The failed tests of an `npm test` run, listed at its end: each vitest run writes its JSON
// report into one directory (REACH_TEST_RESULTS, packages/tsconfig/vitest-loops.mjs), and a
// failure in an early part is otherwise hundreds of lines above the last one printed.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/** A fresh directory for the runs' reports. */
export function makeResultsDir() {
  return mkdtempSync(join(tmpdir(), 'reach-test-results-'));
}

/** How many lines of a failure's message the recap shows. */
const MESSAGE_LINES = 12;

/**
 * The recap of the reports in `dir`, relative to `root`: a line per failed test (its run, file
 * and name) with the first lines of its error, and a file that failed outside any test (a hook,
 * an import); '' when nothing failed. A report that cannot be read is named, not skipped.
 */
export function recapFailures(dir, root) {
  const lines = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const run = name.slice(0, -'.json'.length);
    let report;
    try {
      report = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    } catch (err) {
      lines.push(`${run}: its report could not be read (${err.message})`);
      continue;
    }
    for (const file of report.testResults ?? []) {
      const path = relative(root, file.name);
      const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
      for (const t of failed) {
        lines.push(`FAIL ${run} ${path} > ${t.fullName}`);
        lines.push(...excerpt(t.failureMessages?.[0]));
      }
      if (failed.length === 0 && file.status === 'failed') {
        lines.push(`FAIL ${run} ${path} (outside its tests)`);
        lines.push(...excerpt(file.message));
      }
    }
  }
  return lines.join('\n');
}

/** A stack line of no use to a reader: a library's, Node's own, or an anonymous one. */
const NOISE = /^\s*at .*(node_modules|node:|<anonymous>)/;

/** The first MESSAGE_LINES non-empty lines of `message` but NOISE, indented. */
function excerpt(message) {
  return String(message ?? '')
    .split('\n')
    .filter((l) => l.trim() !== '' && !NOISE.test(l))
    .slice(0, MESSAGE_LINES)
    .map((l) => `    ${l.trimEnd()}`);
}

/** Removes the reports' directory. */
export function removeResultsDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}
