import { describe, expect, it } from 'vitest';
import { capabilityTool, capabilityToolName, toolResult } from './tools.ts';

describe('MCP tools', () => {
  it('names a capability tool in the tool-name alphabet', () => {
    expect(capabilityToolName('echo')).toBe('run_echo');
    expect(capabilityToolName('ns:summarize.v2-x')).toBe('run_ns_summarize.v2-x');
    expect(capabilityToolName('c'.repeat(128))).toHaveLength(128);
  });

  it("takes the registered schema as the tool's input schema, else any object", () => {
    const schema = { type: 'object', properties: { text: { type: 'string' } } };
    expect(capabilityTool({ capability: 'e', agents: 1, inputSchema: schema }).inputSchema).toEqual(
      schema,
    );
    expect(
      capabilityTool({ capability: 'e', agents: 2, inputSchema: undefined }).inputSchema,
    ).toEqual({ type: 'object', additionalProperties: true });
  });

  it('answers an API error as an error result carrying the code', () => {
    const body = { error: 'NO_AGENT', message: 'no live agent' };
    expect(toolResult({ status: 503, body })).toEqual({
      content: [{ type: 'text', text: JSON.stringify(body) }],
      structuredContent: body,
      isError: true,
    });
    expect(toolResult({ status: 200, body: { ok: 1 } }).isError).toBeUndefined();
  });
});
