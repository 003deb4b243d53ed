import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `rk_<key_id>_<secret>`: `key_id` is 16 hex digits (public: it names the key
 * in listings, logs and `DELETE /v1/keys/:key_id`), `secret` 32 random bytes in base64url
 * (256 bits). Only the SHA-256 of the secret is stored; a slow hash would add nothing, since the
 * secret is random and not a password.
 */
const KEY_PATTERN = /^rk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** The pattern of a key_id (what `DELETE /v1/keys/:key_id` accepts). */
export const KEY_ID_PATTERN = '^[0-9a-f]{16}$';

/** A key as it was issued: shown once to the operator who made it. */
export interface IssuedSecret {
  keyId: string;
  /** The whole key, `rk_<key_id>_<secret>`. */
  key: string;
  /** SHA-256 of the secret part, hex: what the store keeps. */
  secretHash: string;
}

/** SHA-256 of `text`, hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new random key. */
export function newApiKey(): IssuedSecret {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, key: `rk_${keyId}_${secret}`, secretHash: sha256Hex(secret) };
}

/** The key_id and secret of a key, or undefined when `key` is not shaped like one. */
export function parseApiKey(key: string): { keyId: string; secret: string } | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  return { keyId: match[1] as string, secret: match[2] as string };
}

/** Compares two hex digests in constant time (same length by construction). */
export function sameDigest(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
