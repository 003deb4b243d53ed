/**
 * `npm start` runs this (infra/bootstrap/start.mjs, once the build is up to date):
 * `node --conditions=agent-reach-dist apps/launcher/dist/main.js [--cluster]`. The repository
 * root holds `.reach/`, the data and pid files of what it starts.
 */
import { fileURLToPath } from 'node:url';
import { launchStack } from './launch-stack.ts';

// src/main.ts and dist/main.js are both three levels below the root.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--cluster');
if (unknown.length > 0) {
  process.stderr.write(
    `npm start: unknown argument ${unknown.join(' ')}; the one option is --cluster (npm start -- --cluster)\n`,
  );
  process.exitCode = 2;
} else {
  process.exitCode = await launchStack(root, { cluster: args.includes('--cluster') });
}
