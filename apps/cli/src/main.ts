import { processIo, runCli } from './cli.ts';

// exitCode rather than exit(): stdout is flushed before the process ends.
process.exitCode = await runCli(process.argv.slice(2), processIo());
