import { randomBytes } from 'node:crypto';

/** This process's part of every nonce: 72 random bits, drawn once. */
const PREFIX = randomBytes(9).toString('base64url');
let counter = 0;

/**
 * A nonce for a claim or an assignment: this process's random prefix and a counter. It only has
 * to tell a command that ioredis re-sends after a dropped connection from another submission's,
 * so it needs to be unique, not unguessable — a UUID per task would cost a CSPRNG read and a
 * 36-character format for nothing more.
 */
export function nextNonce(): string {
  counter += 1;
  return `${PREFIX}.${counter.toString(36)}`;
}
