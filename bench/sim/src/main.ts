/**
 * `npm run sim [-- --quick] [--seed N] [--tasks N] [--agents N] [--util 0.7,0.9] [--routers N]
 * [--max-candidates N] [--snapshot-ms N] [--parallel-share 0.5]`: runs the routing lab and prints the table, then one
 * line of JSON with the key figures.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_LAB, QUICK_LAB, runLab, type LabOptions } from './lab.ts';
import { formatReport, keyFigures } from './report.ts';

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new RangeError(`--${name} must be a positive number, got ${text}`);
  return n;
}

function optionsFrom(argv: string[]): LabOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      seed: { type: 'string' },
      tasks: { type: 'string' },
      agents: { type: 'string' },
      util: { type: 'string' },
      routers: { type: 'string' },
      'max-candidates': { type: 'string' },
      'snapshot-ms': { type: 'string' },
      'parallel-share': { type: 'string' },
    },
    strict: true,
  });
  const base = values.quick ? QUICK_LAB : DEFAULT_LAB;
  const utilisations =
    values.util?.split(',').map((u) => positive('util', u, 0)) ?? base.utilisations;
  if (utilisations.some((u) => u >= 1))
    throw new RangeError('--util values must be below 1 (shares of capacity)');
  const parallelShare = positive(
    'parallel-share',
    values['parallel-share'],
    base.fleet.parallelShare,
  );
  if (parallelShare > 1)
    throw new RangeError('--parallel-share is a share of max_concurrency, at most 1');
  return {
    ...base,
    seed: Math.floor(positive('seed', values.seed, base.seed)),
    tasks: Math.floor(positive('tasks', values.tasks, base.tasks)),
    fleet: {
      ...base.fleet,
      agents: Math.floor(positive('agents', values.agents, base.fleet.agents)),
      parallelShare,
    },
    utilisations,
    routers: Math.floor(positive('routers', values.routers, base.routers)),
    maxCandidates: Math.floor(
      positive('max-candidates', values['max-candidates'], base.maxCandidates),
    ),
    snapshotIntervalMs: positive('snapshot-ms', values['snapshot-ms'], base.snapshotIntervalMs),
  };
}

async function main(): Promise<void> {
  const report = await runLab(optionsFrom(process.argv.slice(2)));
  process.stdout.write(`${formatReport(report)}\n\n${JSON.stringify(keyFigures(report))}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
