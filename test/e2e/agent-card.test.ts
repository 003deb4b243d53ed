/**
 * AgentCard registration end to end, with registry-sync and a router in this process: worker-sdk
 * agents that give only an A2A AgentCard — inline, or by a URL on loopback that registry-sync
 * fetches — are registered with their skills as capabilities and run the tasks submitted for
 * them; GET /v1/agents/:id/card returns the card each registered with.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createRegistryService, type RegistryService } from '@agent-reach/registry-sync';
import { createRouterService, type RouterService } from '@agent-reach/router';
import { ReachAgent, type ReachAgentOptions } from '@agent-reach/worker-sdk';
import { randomPrefix, testServices } from '@agent-reach/testkit';

const silent = pino({ level: 'silent' });
const inlineCard = {
  name: 'Shouter',
  version: '1.0.0',
  skills: [{ id: 'card-shout', name: 'Shout', description: 'Upper-cases text', tags: ['text'] }],
};
const fetchedCard = {
  name: 'Reverser',
  skills: [{ id: 'card-reverse', name: 'Reverse', description: 'Reverses text', tags: [] }],
};

let prefix: string;
let redis: Redis;
let sync: RegistryService;
let router: RouterService;
let cardServer: Server;
const agents: ReachAgent[] = [];

beforeAll(async () => {
  prefix = randomPrefix();
  const url = testServices().redisUrl;
  redis = new Redis(url);
  cardServer = createServer((req, res) => {
    if (req.url === '/.well-known/agent-card.json') res.end(JSON.stringify(fetchedCard));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => cardServer.listen(0, '127.0.0.1', resolve));
  sync = await createRegistryService(
    { redisUrl: url, prefix, port: 0, probeIntervalMs: 600_000 },
    { logger: silent },
  );
  router = await createRouterService({ redisUrl: url, prefix, port: 0 }, { logger: silent });
  const registryUrl = await sync.listen();
  const routerUrl = await router.listen();
  const start = async (options: Partial<ReachAgentOptions> & { agentId: string }) => {
    const agent = new ReachAgent({
      registryUrl,
      routerUrl,
      redisUrl: url,
      handler: async (task) => {
        const text = (task.payload as { text: string }).text;
        return task.capability === 'card-shout'
          ? { text: text.toUpperCase() }
          : { text: [...text].reverse().join('') };
      },
      shutdownTimeoutMs: 2000,
      logger: silent,
      ...options,
    });
    agents.push(agent);
    agent.start();
    await agent.ready();
  };
  const port = (cardServer.address() as AddressInfo).port;
  await start({ agentId: 'shouter', card: inlineCard });
  await start({
    agentId: 'reverser',
    cardUrl: `http://127.0.0.1:${port}/.well-known/agent-card.json`,
  });
  await router.snapshot.reload();
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await router?.close();
  await sync?.close();
  cardServer?.closeAllConnections();
  await new Promise((resolve) => cardServer?.close(resolve));
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function run(capability: string, text: string) {
  const res = await router.app.inject({
    method: 'POST',
    url: '/v1/tasks?wait_ms=10000',
    payload: { capability, payload: { text } },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ status: string; agent_id: string; result: unknown }>();
}

describe('an agent registered with only an AgentCard', () => {
  it('inline: gets the tasks of its skill and serves its card', async () => {
    expect(await run('card-shout', 'hello')).toMatchObject({
      status: 'completed',
      agent_id: 'shouter',
      result: { text: 'HELLO' },
    });
    const card = await sync.app.inject({ url: '/v1/agents/shouter/card' });
    expect(card.statusCode).toBe(200);
    expect(card.json()).toEqual(inlineCard);
  });

  it('by URL: registry-sync fetches the card, and the skill routes to the agent', async () => {
    expect(await run('card-reverse', 'abc')).toMatchObject({
      status: 'completed',
      agent_id: 'reverser',
      result: { text: 'cba' },
    });
    const view = await sync.app.inject({ url: '/v1/agents/reverser' });
    expect(view.json()).toMatchObject({
      capabilities: ['card-reverse'],
      meta: { card_name: 'Reverser' },
    });
    expect((await sync.app.inject({ url: '/v1/agents/reverser/card' })).json()).toEqual(
      fetchedCard,
    );
  });
});
