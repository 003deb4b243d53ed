import pino from 'pino';
import { eventSinkOptionsFromEnv } from '@agent-reach/events';
import { runMain } from '@agent-reach/service-kit';
import { optionsFromEnv } from './options.ts';
import { createRegistryService } from './service.ts';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { service: 'registry-sync' } });

runMain('registry-sync', logger, () =>
  createRegistryService(optionsFromEnv(), { logger, events: eventSinkOptionsFromEnv(process.env) }),
);
