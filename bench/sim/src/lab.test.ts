import { describe, expect, it } from 'vitest';
import { QUICK_LAB, runLab } from './lab.ts';
import { keyFigures } from './report.ts';

describe('runLab (quick)', () => {
  it("puts the project's policy no worse than random on p99 at 90 % utilisation", async () => {
    const report = await runLab({
      ...QUICK_LAB,
      utilisations: [0.9],
      policies: ['random', 'project'],
      stickinessNs: [5],
    });
    const p99 = (policy: string) => report.figures.find((f) => f.policy === policy)?.p99S ?? NaN;
    expect(Number.isFinite(p99('project'))).toBe(true);
    expect(p99('project')).toBeLessThanOrEqual(p99('random'));
    expect(report.figures.every((f) => f.withinMax)).toBe(true);
    expect(report.stickiness[0]?.pass).toBe(true);
    expect(JSON.parse(JSON.stringify(keyFigures(report)))).toMatchObject({
      seed: QUICK_LAB.seed,
      tasks: QUICK_LAB.tasks,
    });
    // Agents at a health score of 95 get less than their capacity's share, where the policy
    // without the health penalty gives them about that share.
    const share = (policy: string) =>
      report.health.find((h) => h.policy === policy)?.failingTaskShare ?? NaN;
    const capacity = report.health[0]?.failingCapacityShare ?? NaN;
    expect(share('project')).toBeLessThan(0.75 * capacity);
    expect(share('project-no-health')).toBeGreaterThan(0.9 * capacity);
  });
});
