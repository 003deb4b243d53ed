import { createHmac, timingSafeEqual } from 'node:crypto';
import { AckField } from './fields.ts';

const SIG = AckField.sig;

/**
 * The text an ack signature covers: every field and value of the entry except `sig`, in the
 * order written, each as `<byte length>:<bytes>` (so no two entries give the same text). A
 * worker in any language, or a shell with `openssl`, builds it the same way (docs/PROTOCOL.md §4).
 */
export function ackSigningText(fields: readonly string[]): string {
  let text = '';
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name === SIG) continue;
    const value = fields[i + 1] as string;
    text += `${Buffer.byteLength(name)}:${name}${Buffer.byteLength(value)}:${value}`;
  }
  return text;
}

/**
 * HMAC-SHA256, hex, of {@link ackSigningText} under `ackKey` (the register reply's `ack_key`,
 * used as its text: `openssl dgst -sha256 -hmac "$ACK_KEY"`).
 */
export function signAck(fields: readonly string[], ackKey: string): string {
  return createHmac('sha256', ackKey).update(ackSigningText(fields)).digest('hex');
}

/** The fields of an ack entry with its `sig` appended. */
export function withAckSignature(fields: readonly string[], ackKey: string): string[] {
  return [...fields, SIG, signAck(fields, ackKey)];
}

/** The `sig` value of an entry, or undefined. */
export function ackSignatureOf(fields: readonly string[]): string | undefined {
  for (let i = fields.length - 2; i >= 0; i -= 2) if (fields[i] === SIG) return fields[i + 1];
  return undefined;
}

/** True when the entry carries a `sig` made with `ackKey` (constant-time compare). */
export function ackSignatureValid(fields: readonly string[], ackKey: string): boolean {
  const given = ackSignatureOf(fields);
  if (given === undefined || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(signAck(fields, ackKey), 'hex'));
}
