import { createHash, randomBytes } from 'node:crypto';

/**
 * An agent token is `<epoch>.<secret>`. Only a hash of the secret is stored. The epoch in the
 * token lets the server tell a fenced instance (409 STALE_EPOCH) from a wrong token (401).
 */
export interface ParsedToken {
  epoch: number;
  secretHash: string;
}

/** A new random secret and its stored hash. */
export function mintSecret(): { secret: string; secretHash: string } {
  const secret = randomBytes(24).toString('base64url');
  return { secret, secretHash: hashSecret(secret) };
}

/** The token handed to the agent once the epoch is known. */
export function formatToken(epoch: number, secret: string): string {
  return `${epoch}.${secret}`;
}

/** sha256 of a secret, hex. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Parses an `Authorization: Bearer <token>` header; undefined when malformed. */
export function parseBearer(header: string | undefined): ParsedToken | undefined {
  if (!header) return undefined;
  const match = /^Bearer (.*)$/.exec(header.trim());
  return match ? parseToken(match[1] as string) : undefined;
}

/** Parses a token as a register reply gives it (`<epoch>.<secret>`); undefined when malformed. */
export function parseToken(text: string): ParsedToken | undefined {
  const match = /^(\d{1,15})\.([A-Za-z0-9_-]{16,128})$/.exec(text);
  if (!match) return undefined;
  return { epoch: Number(match[1]), secretHash: hashSecret(match[2] as string) };
}
