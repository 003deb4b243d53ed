import { defineConfig } from 'vitest/config';

// `npm run docs:screenshots`: the console's screenshots for docs/CONSOLE.md (not part of npm test).
export default defineConfig({
  test: {
    include: ['screenshots/**/*.screenshots.ts'],
    globalSetup: ['@agent-reach/testkit/global-setup'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
