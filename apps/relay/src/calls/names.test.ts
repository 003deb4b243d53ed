import { describe, expect, it } from 'vitest';
import { capabilityOf, mapCapabilities } from './names.ts';

const tools = (...names: string[]) => names.map((remoteName) => ({ remoteName }));

describe('capabilityOf', () => {
  it('keeps id characters and turns every other one into a dot', () => {
    expect(capabilityOf('github/search')).toBe('github.search');
    expect(capabilityOf('a:b_c-d.e')).toBe('a:b_c-d.e');
    expect(capabilityOf('résumé writer')).toBe('r.sum..writer');
  });

  it('puts the prefix first', () => {
    expect(capabilityOf('search', 'gh.')).toBe('gh.search');
  });
});

describe('mapCapabilities', () => {
  it('maps every listed name, in order, keeping input schemas', () => {
    const schema = { type: 'object' };
    const { capabilities, refused } = mapCapabilities(
      [{ remoteName: 'github/search', inputSchema: schema }, { remoteName: 'summarize' }],
      undefined,
      'acme:',
    );
    expect(capabilities).toEqual([
      { capability: 'acme:github.search', remoteName: 'github/search', inputSchema: schema },
      { capability: 'acme:summarize', remoteName: 'summarize' },
    ]);
    expect(refused).toEqual([]);
  });

  it('refuses an empty name', () => {
    const { capabilities, refused } = mapCapabilities(tools('', 'ok'));
    expect(capabilities.map((c) => c.capability)).toEqual(['ok']);
    expect(refused).toEqual([{ name: '', reason: expect.stringContaining('empty') }]);
  });

  it('refuses a name whose capability, prefix included, is over 128 characters', () => {
    const name = 'x'.repeat(125);
    expect(mapCapabilities(tools(name), undefined, 'abc').capabilities).toHaveLength(1);
    const { capabilities, refused } = mapCapabilities(tools(name), undefined, 'abcd');
    expect(capabilities).toEqual([]);
    expect(refused[0]!.name).toBe(name);
    expect(refused[0]!.reason).toContain('129 characters');
  });

  it('refuses every name of a collision, naming the others', () => {
    const { capabilities, refused } = mapCapabilities(tools('a/b', 'a.b', 'c'));
    expect(capabilities.map((c) => c.capability)).toEqual(['c']);
    expect(refused).toEqual([
      { name: 'a/b', reason: '"a/b" maps to "a.b", as does "a.b"' },
      { name: 'a.b', reason: '"a.b" maps to "a.b", as does "a/b"' },
    ]);
  });

  it('counts a name listed twice once', () => {
    const { capabilities, refused } = mapCapabilities(tools('dup', 'dup'));
    expect(capabilities).toEqual([{ capability: 'dup', remoteName: 'dup' }]);
    expect(refused).toEqual([]);
  });

  it('keeps only declared capabilities, compared after mapping and prefix', () => {
    const { capabilities, refused } = mapCapabilities(
      tools('github/search', 'github/issues', 'other'),
      ['p.github.search', 'p.missing'],
      'p.',
    );
    expect(capabilities).toEqual([{ capability: 'p.github.search', remoteName: 'github/search' }]);
    expect(refused).toEqual([
      { name: 'p.missing', reason: '"p.missing" is declared but the endpoint does not list it' },
    ]);
  });

  it('refuses a declared capability whose names collide', () => {
    const { capabilities, refused } = mapCapabilities(tools('a/b', 'a b'), ['a.b']);
    expect(capabilities).toEqual([]);
    expect(refused.map((r) => r.name)).toEqual(['a/b', 'a b']);
  });
});
