import { describe, expect, it } from 'vitest';
import { scriptFolderProblems } from '@agent-reach/service-kit';

describe('the scripts of webhooks/', () => {
  it('have one definition per .lua file, whose header agrees with it', async () => {
    expect(await scriptFolderProblems(new URL('.', import.meta.url))).toEqual([]);
  });
});
