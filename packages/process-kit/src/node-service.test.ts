import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DIST_CONDITION, nodeArgsFor, SERVICE_V8_FLAGS } from './node-service.ts';

const run = promisify(execFile);

describe('nodeArgsFor', () => {
  it('runs TypeScript through tsx and built JavaScript with the dist condition', () => {
    const ts = nodeArgsFor('/repo/apps/router/src/server.ts');
    expect(ts.slice(0, SERVICE_V8_FLAGS.length)).toEqual(SERVICE_V8_FLAGS);
    expect(ts[SERVICE_V8_FLAGS.length]).toBe('--import');
    expect(ts[SERVICE_V8_FLAGS.length + 1]).toMatch(/^file:.*tsx/);
    expect(ts.at(-1)).toBe('/repo/apps/router/src/server.ts');
    expect(nodeArgsFor('/repo/apps/router/dist/server.js')).toEqual([
      '--max-semi-space-size=8',
      `--conditions=${DIST_CONDITION}`,
      '/repo/apps/router/dist/server.js',
    ]);
  });

  it('starts a service with a young generation of 8 MiB semi-spaces', async () => {
    // What the flag does, read back from a node started with the arguments nodeArgsFor gives.
    const args = nodeArgsFor('/dev/null').slice(0, -2);
    const script =
      'let k=[];for(let i=0;i<3e6;i++){k.push({i});if(k.length>1e5)k=[]}' +
      "console.log(require('v8').getHeapSpaceStatistics().find((s)=>s.space_name==='new_space').space_size)";
    const { stdout } = await run(process.execPath, [...args, '-e', script]);
    expect(Number(stdout) / 2 ** 20).toBeLessThanOrEqual(16);
    const { stdout: plain } = await run(process.execPath, ['-e', script]);
    expect(Number(plain) / 2 ** 20).toBeGreaterThan(16);
  });
});
