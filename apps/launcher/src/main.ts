/**
 * `npm start` runs this (infra/bootstrap/start.mjs, once the build is up to date):
 * `node --conditions=agent-reach-dist apps/launcher/dist/main.js`. The repository root holds
 * `.reach/`, the data and pid files of what it starts.
 */
import { fileURLToPath } from 'node:url';
import { launchStack } from './launch-stack.ts';

// src/main.ts and dist/main.js are both three levels below the root.
const root = fileURLToPath(new URL('../../../', import.meta.url));
process.exitCode = await launchStack(root);
