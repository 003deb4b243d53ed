import { runMain, serviceLogger } from '@agent-reach/service-kit';
import { optionsFromEnv } from './options.ts';
import { createRelayService } from './service.ts';

// Secrets (keys, tokens, endpoint headers) are redacted from every line.
const logger = serviceLogger('relay', process.env.LOG_LEVEL ?? 'info');

runMain('relay', logger, async () => {
  const service = await createRelayService(optionsFromEnv(), { logger });
  return {
    listen: async () => {
      const address = await service.listen();
      logger.info({ address, relay_id: service.options.relayId }, 'relay listening');
      return address;
    },
    close: () => service.close(),
  };
});
