import { describe, expect, it } from 'vitest';
import { chooseServiceBuild, serverEntry } from './service-build.ts';

describe('the services build a bench runs', () => {
  it('finds each service entry in src or in dist', () => {
    expect(serverEntry('@agent-reach/router', 'src')).toMatch(/apps\/router\/src\/server\.ts$/);
    expect(serverEntry('@agent-reach/router', 'dist')).toMatch(/apps\/router\/dist\/server\.js$/);
    expect(serverEntry('@agent-reach/registry-sync', 'dist')).toMatch(
      /apps\/registry-sync\/dist\/server\.js$/,
    );
  });

  it('runs src when told to, and says so', () => {
    expect(chooseServiceBuild('src')).toEqual({
      build: 'src',
      note: 'services run from src (tsx)',
    });
  });
});
