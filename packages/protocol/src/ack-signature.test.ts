import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ackSignatureOf,
  ackSignatureValid,
  ackSigningText,
  signAck,
  withAckSignature,
} from './ack-signature.ts';
import { encodeAck } from './codecs.ts';

const KEY = 'a'.repeat(64);
const ack = encodeAck({
  task_id: 't1',
  stage: 'completed',
  agent_id: 'a1',
  instance_id: 'i1',
  epoch: 3,
  attempt: 1,
  result: '{"text":"héllo\\nworld"}',
});

/** The shell function docs/PROTOCOL.md §4 gives raw workers, as the page has it. */
function shellRecipe(): string {
  const page = readFileSync(new URL('../../../docs/PROTOCOL.md', import.meta.url), 'utf8');
  const fn = /^ack_sig\(\) \{[\s\S]*?^\}$/m.exec(page)?.[0];
  if (fn === undefined) throw new Error('docs/PROTOCOL.md has no ack_sig() function');
  return `${fn}\nack_sig "$@"\n`;
}

describe('ack signatures', () => {
  it('cover every field but sig as <byte length>:<bytes>, in order', () => {
    expect(ackSigningText(['task_id', 't1', 'result', 'é', 'sig', 'x'])).toBe(
      '7:task_id2:t16:result2:é',
    );
  });

  it('verify what was signed with the same key, and nothing changed or signed with another', () => {
    const signed = withAckSignature(ack, KEY);
    expect(ackSignatureOf(signed)).toMatch(/^[0-9a-f]{64}$/);
    expect(ackSignatureValid(signed, KEY)).toBe(true);
    expect(ackSignatureValid(signed, 'b'.repeat(64))).toBe(false);
    expect(ackSignatureValid(ack, KEY)).toBe(false);
    const tampered = signed.map((v) => (v === '1' ? '2' : v));
    expect(ackSignatureValid(tampered, KEY)).toBe(false);
    // A field moved into another's value changes the text.
    expect(signAck(['a', 'bc'], KEY)).not.toBe(signAck(['ab', 'c'], KEY));
  });

  it('match the shell recipe of docs/PROTOCOL.md a raw worker signs with (bash and openssl)', () => {
    const fromShell = execFileSync('bash', ['-c', shellRecipe(), 'ack_sig', KEY, ...ack], {
      encoding: 'utf8',
    }).trim();
    expect(fromShell).toBe(signAck(ack, KEY));
  });
});
