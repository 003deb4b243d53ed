import { describe, expect, it } from 'vitest';
import {
  InvalidCardError,
  mergeCard,
  PLACEMENT_EXTENSION_URI,
  readAgentCard,
} from './agent-card.ts';

const card = {
  name: 'Recipe Agent',
  description: 'Helps with recipes',
  version: '1.2.0',
  url: 'http://127.0.0.1:9999/a2a',
  provider: { organization: 'Acme', url: 'https://acme.example' },
  skills: [
    { id: 'recipes.find', name: 'Find', tags: ['cooking', 'free text tag'] },
    { id: 'recipes.plan', name: 'Plan', tags: [] },
  ],
  capabilities: {
    streaming: true,
    extensions: [
      { uri: PLACEMENT_EXTENSION_URI, params: { region: 'eu-west', tags: ['gpu', 'kitchen'] } },
    ],
  },
};

describe('readAgentCard', () => {
  it('maps skill ids to capabilities, the placement extension to region and tags, fields to meta', () => {
    expect(readAgentCard(card)).toEqual({
      capabilities: ['recipes.find', 'recipes.plan'],
      region: 'eu-west',
      tags: ['gpu', 'kitchen'],
      meta: {
        card_name: 'Recipe Agent',
        card_description: 'Helps with recipes',
        card_version: '1.2.0',
        card_provider: 'Acme',
        card_url: 'http://127.0.0.1:9999/a2a',
      },
    });
  });

  it('reads an A2A 1.0 card: its first interface URL, no placement extension', () => {
    const v1 = {
      name: 'v1',
      supportedInterfaces: [{ url: 'http://127.0.0.1:1/rpc', protocolBinding: 'JSONRPC' }],
      skills: [{ id: 'echo' }],
    };
    expect(readAgentCard(v1)).toEqual({
      capabilities: ['echo'],
      tags: [],
      meta: { card_name: 'v1', card_url: 'http://127.0.0.1:1/rpc' },
    });
  });

  it.each([
    ['not an object', 'card', /card/],
    ['no name', { skills: [] }, /card\.name/],
    ['no skills', { name: 'x' }, /skills/],
    ['a skill without an id', { name: 'x', skills: [{ name: 'y' }] }, /card\.skills\.0/],
    ['a skill id with a space', { name: 'x', skills: [{ id: 'a b' }] }, /card\.skills\.0\.id/],
    ['two skills of one id', { name: 'x', skills: [{ id: 'a' }, { id: 'a' }] }, /same id/],
    ['the probe capability', { name: 'x', skills: [{ id: '_probe' }] }, /reserved/],
    [
      'a bad placement region',
      {
        name: 'x',
        skills: [{ id: 'a' }],
        capabilities: { extensions: [{ uri: PLACEMENT_EXTENSION_URI, params: { region: 'a b' } }] },
      },
      /region/,
    ],
  ])('refuses %s, naming the field', (_what, bad, message) => {
    expect(() => readAgentCard(bad)).toThrow(InvalidCardError);
    expect(() => readAgentCard(bad)).toThrow(message);
  });
});

describe('mergeCard', () => {
  it('unites capabilities and tags; the registration’s own region and meta keys win', () => {
    const merged = mergeCard(
      {
        capabilities: ['echo', 'recipes.find'],
        region: 'us-east',
        tags: ['gpu'],
        meta: { card_name: 'mine', team: 'x' },
      },
      readAgentCard(card),
    );
    expect(merged).toEqual({
      capabilities: ['echo', 'recipes.find', 'recipes.plan'],
      region: 'us-east',
      tags: ['gpu', 'kitchen'],
      meta: expect.objectContaining({ card_name: 'mine', team: 'x', card_version: '1.2.0' }),
    });
  });

  it('refuses a union over 64 capabilities', () => {
    const own = Array.from({ length: 64 }, (_, i) => `c${i}`);
    expect(() => mergeCard({ capabilities: own }, readAgentCard(card))).toThrow(/at most 64/);
  });
});
