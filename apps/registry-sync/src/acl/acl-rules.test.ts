import { describe, expect, it } from 'vitest';
import { agentAclRules, agentUsername, exactKeyPattern, parseAgentUsername } from './acl-rules.ts';

describe('agent ACL rules', () => {
  it('give XADD on the acks shard at the root, reads of inbox, control stream and pools in one selector, nothing else', () => {
    const rules = agentAclRules(
      {
        inbox: 'r:{a:a1}:inbox',
        control: 'r:{a:a1}:control',
        pools: ['r:{pool:acme/echo}'],
        acksStream: 'r:acks',
      },
      'pw',
    );
    expect(rules).toEqual([
      'reset',
      'on',
      '>pw',
      'resetchannels',
      '-@all',
      '+ping',
      '+client|id',
      '+client|setname',
      '+cluster|slots',
      '+xadd',
      '%W~r:acks',
      '(+xreadgroup +xack +xclaim +xread ~r:{a:a1}:inbox ~r:{a:a1}:control ~r:{pool:acme/echo})',
    ]);
    expect(rules.join(' ')).not.toMatch(/@admin|@dangerous|@scripting|allkeys|~\*/);
  });

  it('match each key exactly: glob characters are escaped', () => {
    expect(exactKeyPattern('a*b?[c]\\')).toBe('a\\*b\\?\\[c\\]\\\\');
  });

  it('name users per instance under the prefix and read the names back', () => {
    const name = agentUsername('reach', 'a:1', 'i-1');
    expect(name).toBe('reach|agent|a:1|i-1');
    expect(parseAgentUsername('reach', name)).toEqual({ agentId: 'a:1', instanceId: 'i-1' });
    expect(parseAgentUsername('other', name)).toBeUndefined();
    expect(parseAgentUsername('reach', 'default')).toBeUndefined();
  });
});
