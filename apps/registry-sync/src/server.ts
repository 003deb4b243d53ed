import { eventSinkOptionsFromEnv } from '@agent-reach/events';
import { runMain, serviceLogger } from '@agent-reach/service-kit';
import { optionsFromEnv } from './options.ts';
import { createRegistryService } from './service.ts';

// Secrets (keys, tokens, cookies, Redis passwords) are redacted from every line.
const logger = serviceLogger('registry-sync', process.env.LOG_LEVEL ?? 'info');

runMain('registry-sync', logger, () =>
  createRegistryService(optionsFromEnv(), { logger, events: eventSinkOptionsFromEnv(process.env) }),
);
