import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileAgentOptions } from '../agent/options.ts';
import { compileClientOptions } from '../client/options.ts';
import { clientSettingFromEnv, RENAMED_SETTING_WARNING } from './client-env.ts';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('client settings from the environment', () => {
  it('reads the one spelling, trimmed, and nothing when it is blank', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    expect(clientSettingFromEnv('apiKey', { REACH_KEY: ' k1 ' })).toBe('k1');
    expect(clientSettingFromEnv('agentId', { REACH_AGENT_ID: '' })).toBeUndefined();
    expect(clientSettingFromEnv('routerUrl', {})).toBeUndefined();
    expect(warn).not.toHaveBeenCalled();
  });

  it('still reads an earlier spelling, with one DeprecationWarning naming the new one', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    expect(clientSettingFromEnv('apiKey', { REACH_API_KEY: 'old-key' })).toBe('old-key');
    expect(clientSettingFromEnv('apiKey', { REACH_API_KEY: 'old-key' })).toBe('old-key');
    expect(warn).toHaveBeenCalledTimes(1);
    const [message, options] = warn.mock.calls[0] ?? [];
    expect(message).toBe(
      'REACH_API_KEY is deprecated and will be ignored from the next release: set REACH_KEY instead',
    );
    expect(String(message)).not.toContain('\n');
    expect(options).toEqual({ type: 'DeprecationWarning', code: RENAMED_SETTING_WARNING });
  });

  it('prefers the new spelling when both are set, without a warning', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    expect(clientSettingFromEnv('agentId', { REACH_AGENT_ID: 'new', AGENT_ID: 'old' })).toBe('new');
    expect(warn).not.toHaveBeenCalled();
  });

  it('gives the agent and the client their URLs and key when the options do not', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    vi.stubEnv('REACH_KEY', 'agent-key');
    vi.stubEnv('REACH_ROUTER_URL', 'http://router.test:9001/');
    vi.stubEnv('REGISTRY_URL', 'http://registry.test:9000');
    const agent = compileAgentOptions({
      agentId: 'a',
      capabilities: ['c'],
      handler: () => Promise.resolve(1),
    });
    expect(agent).toMatchObject({
      apiKey: 'agent-key',
      routerUrl: 'http://router.test:9001',
      registryUrl: 'http://registry.test:9000',
    });
    expect(warn).toHaveBeenCalledWith(
      'REGISTRY_URL is deprecated and will be ignored from the next release: set REACH_REGISTRY_URL instead',
      { type: 'DeprecationWarning', code: RENAMED_SETTING_WARNING },
    );
    expect(compileClientOptions({ routerUrl: 'http://given.test' }).routerUrl).toBe(
      'http://given.test',
    );
    expect(compileClientOptions().routerUrl).toBe('http://router.test:9001');
  });
});
