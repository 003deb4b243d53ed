import { eventSinkOptionsFromEnv } from '@agent-reach/events';
import { runMain, serviceLogger } from '@agent-reach/service-kit';
import { optionsFromEnv } from './options.ts';
import { createRouterService } from './service.ts';

// Secrets (keys, tokens, cookies, Redis passwords) are redacted from every line.
const logger = serviceLogger('router', process.env.LOG_LEVEL ?? 'info');

runMain('router', logger, () =>
  createRouterService(optionsFromEnv(), { logger, events: eventSinkOptionsFromEnv(process.env) }),
);
