import { describe, expect, it } from 'vitest';
import { reachKeys } from '@agent-reach/protocol';
import { isRelayUsername, relayAclRules, relayUsername } from './relay-acl-rules.ts';

describe('relayAclRules', () => {
  const keys = reachKeys('rp');
  const rules = relayAclRules({ keys, agentIds: ['e-1'], acksStreams: ['rp:acks'] }, 'pw');

  it('reaches only the endpoint agents’ inboxes and control streams, and writes acks only', () => {
    expect(rules.slice(0, 4)).toEqual(['reset', 'on', '>pw', '-@all']);
    expect(rules).toContain('~rp:{a:e-1}:inbox');
    expect(rules).toContain('~rp:{a:e-1}:control');
    expect(rules).toContain('&rp:{a:e-1}:wake');
    expect(rules).toContain('%R~rp:{ep}:secrets');
    expect(rules.at(-1)).toBe('(+xadd %W~rp:acks)');
    expect(rules.join(' ')).not.toContain('pending');
    expect(rules).not.toContain('+xadd');
  });

  it('keeps a stored password hash as it is', () => {
    const again = relayAclRules({ keys, agentIds: [], acksStreams: ['rp:acks'] }, '#abc');
    expect(again[2]).toBe('#abc');
  });

  it('names relay users apart from agent users', () => {
    expect(relayUsername('rp', 'r-1')).toBe('rp|relay|r-1');
    expect(isRelayUsername('rp', 'rp|relay|r-1')).toBe(true);
    expect(isRelayUsername('rp', 'rp|agent|a|i')).toBe(false);
    expect(isRelayUsername('other', 'rp|relay|r-1')).toBe(false);
  });
});
