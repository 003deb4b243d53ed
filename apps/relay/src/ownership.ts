import { createHash } from 'node:crypto';

/**
 * Which relay serves an endpoint agent: rendezvous hashing of the agent id over the live relays.
 * Every relay computes the same answer from the same membership, and when a relay leaves only its
 * own agents move.
 */
export function ownerOf(agentId: string, relays: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const relay of relays) {
    const score = createHash('sha1')
      .update(relay)
      .update('\0')
      .update(agentId)
      .digest()
      .readBigUInt64BE(0);
    if (score > bestScore || (score === bestScore && best !== undefined && relay < best)) {
      best = relay;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The instance id of `agentId` as served by `relayId`: stable for the relay's life, so a
 * re-registration is an update and only a new owner raises the epoch. Ids are at most 128
 * characters: a long pair is shortened to a digest.
 */
export function instanceIdOf(relayId: string, agentId: string): string {
  const id = `${relayId}.${agentId}`;
  if (id.length <= 128) return id;
  return `${relayId}.${createHash('sha256').update(agentId).digest('hex').slice(0, 40)}`;
}
