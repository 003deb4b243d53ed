import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HEADLINE_KEYS } from './report.ts';
import { HOPS } from './systems/reach/hops.ts';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));

/** Runs `node --import tsx src/main.ts --quick` and collects its output. */
function runQuickBench(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--quick'], {
      cwd: pkgDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGINT'), 110_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// A smoke test: the quick bench runs end to end and prints its figures. No timing is asserted —
// CI machines are shared and the figures move.
describe('npm run bench -- --quick', () => {
  it(
    'exits 0 and ends with a JSON line of finite figures under the issue keys',
    { timeout: 120_000 },
    async () => {
      const { code, stdout, stderr } = await runQuickBench();
      expect(code, `bench failed:\n${stderr.slice(-4000)}`).toBe(0);
      const last = stdout.trimEnd().split('\n').at(-1) ?? '';
      const figures = JSON.parse(last) as Record<string, unknown>;
      expect(Object.keys(figures)).toEqual(HEADLINE_KEYS);
      for (const key of HEADLINE_KEYS)
        expect(Number.isFinite(figures[key]), `${key} = ${String(figures[key])}`).toBe(true);
      // Agent-Reach's completions split by hop, a line per run kind and hop with figures in it.
      for (const hop of HOPS)
        expect(stdout).toMatch(new RegExp(`reach paced2000 +${hop} +p50 \\d+ +p99 \\d+`));
    },
  );
});
