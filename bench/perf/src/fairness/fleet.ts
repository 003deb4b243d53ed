import { pino } from 'pino';
import { ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { monoMs, sleep } from '../clock.ts';
import type { Ledger } from './ledger.ts';
import type { FairStack } from './stack.ts';

/** What a fairness task carries: its tenant and its id within the run. */
export interface FairPayload {
  t: string;
  i: string;
}

/** A fleet of agents of one capability; `close()` stops them all. */
export interface FairFleet {
  close(): Promise<void>;
}

/**
 * Starts `agents` shared agents (the admin key: they serve every tenant) of `capability`, each
 * of `slots` slots, whose tasks take `taskMs`, in this process: their handlers write to the
 * ledger `ledger()` returns, on the clock the submitting clients use. The load is light (S/D =
 * 80 tasks/s by default), so sharing the event loop with the clients costs little; a separate
 * process would need a clock and a channel of its own for every receipt.
 */
export async function startFleet(
  stack: FairStack,
  o: { capability: string; agents: number; slots: number; taskMs: number },
  ledger: () => Ledger,
): Promise<FairFleet> {
  const logger = pino({ level: 'warn' });
  const handler = async (task: TaskContext) => {
    const startMs = monoMs();
    const p = (task.payload ?? {}) as Partial<FairPayload>;
    const book = ledger();
    book.received(p.t ?? '', p.i ?? '', startMs);
    await sleep(o.taskMs);
    book.ran(startMs, monoMs());
    return {};
  };
  const agents = Array.from(
    { length: o.agents },
    (_, i) =>
      new ReachAgent({
        registryUrl: stack.registryUrl,
        routerUrl: stack.routerUrl,
        redisUrl: stack.redisUrl,
        agentId: `${o.capability}-agent-${i}`,
        capabilities: [o.capability],
        maxConcurrency: o.slots,
        apiKey: stack.adminKey,
        shared: true,
        handler,
        shutdownTimeoutMs: 2000,
        logger: logger.child({ agent: i }),
      }),
  );
  for (const a of agents) a.start();
  await Promise.all(agents.map((a) => a.ready()));
  await stack.holdsAgents(o.agents);
  return {
    async close() {
      await Promise.allSettled(agents.map((a) => a.close()));
      await stack.holdsAgents(0);
    },
  };
}
