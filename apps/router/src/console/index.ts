import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { ReachKeys } from '@agent-reach/protocol';
import type { ConsoleRouteDeps } from '../routes/console/index.ts';
import { AgentTable } from './agent-table.ts';
import { loadConsoleAssets } from './assets.ts';
import { FleetEventHub, type FleetEventHubSettings } from './fleet-event-hub.ts';
import { RecentTasks, TaskSampler } from './recent-tasks.ts';

/** The console's server side: what its routes read, and the ring of recent tasks it samples. */
export interface RouterConsole extends ConsoleRouteDeps {
  recent: RecentTasks;
}

/** What the console is built from. */
export interface RouterConsoleDeps {
  redis: RedisClient;
  /** Opens the event stream's own blocking connection (only while a console is open). */
  connect: () => RedisClient;
  keys: ReachKeys;
  logger: Logger;
  events?: FleetEventHubSettings;
}

/** Builds the console's collaborators. Nothing runs until a console connects. */
export function createRouterConsole(deps: RouterConsoleDeps): RouterConsole {
  const recent = new RecentTasks();
  const sampler = new TaskSampler({ redis: deps.redis, keys: deps.keys, recent });
  return {
    recent,
    sampler,
    assets: loadConsoleAssets(),
    agents: new AgentTable({ redis: deps.redis, keys: deps.keys, sampler }),
    hub: new FleetEventHub({
      redis: deps.redis,
      connect: deps.connect,
      keys: deps.keys,
      logger: deps.logger,
      settings: deps.events,
    }),
  };
}
