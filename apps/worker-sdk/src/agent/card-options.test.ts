import { describe, expect, it } from 'vitest';
import { PLACEMENT_EXTENSION_URI } from '@agent-reach/protocol';
import { compileAgentOptions, type ReachAgentOptions } from './options.ts';
import { registerBody } from './registration.ts';

const handler = async () => 'ok';
const card = {
  name: 'Chef',
  skills: [{ id: 'recipes.find' }],
  capabilities: {
    extensions: [{ uri: PLACEMENT_EXTENSION_URI, params: { region: 'eu', tags: ['oven'] } }],
  },
};
const compile = (o: Partial<ReachAgentOptions>) =>
  compileAgentOptions({ agentId: 'a', instanceId: 'i', handler, ...o });

describe('card and cardUrl options', () => {
  it('an inline card alone: its skills and placement are the agent’s, and the card is sent', () => {
    const o = compile({ card });
    expect(o).toMatchObject({ capabilities: ['recipes.find'], region: 'eu', tags: ['oven'] });
    expect(registerBody(o, true)).toMatchObject({ capabilities: ['recipes.find'], card });
  });

  it('a card URL alone: no capabilities sent, the registry reads them from the card', () => {
    const body = registerBody(compile({ cardUrl: 'http://127.0.0.1:9/card.json' }), true);
    expect(body).toMatchObject({ card_url: 'http://127.0.0.1:9/card.json' });
    expect(body).not.toHaveProperty('capabilities');
  });

  it('refuses no capabilities and no card, both card and cardUrl, a bad card, a pull agent by URL', () => {
    expect(() => compile({})).toThrow(/capabilities/);
    expect(() => compile({ card, cardUrl: 'http://127.0.0.1/c' })).toThrow(/not both/);
    expect(() => compile({ card: { name: 'x', skills: [{ id: 'a b' }] } })).toThrow(
      /card\.skills\.0\.id/,
    );
    expect(() => compile({ cardUrl: 'ftp://x/c' })).toThrow(/cardUrl/);
    expect(() => compile({ cardUrl: 'http://127.0.0.1/c', channel: 'pull' })).toThrow(/pull/);
  });
});
