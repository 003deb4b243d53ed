#!/usr/bin/env node
// `reach`: loads tsx, then runs the TypeScript entry, so `npx reach …` works from a fresh clone
// after `npm install`, with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
