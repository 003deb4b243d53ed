import { isInvalidCardError, mergeCard, readAgentCard } from '@agent-reach/protocol';

/** The card options of an agent, checked, with the placement they give the agent. */
export interface CompiledCard {
  card: Record<string, unknown> | undefined;
  cardUrl: string | undefined;
  /** The agent's own capabilities with the inline card's skills added. */
  capabilities: string[];
  region: string | undefined;
  tags: string[];
}

/**
 * Checks `card` / `cardUrl` and merges an inline card into the agent's own placement the way
 * registry-sync does (docs/PROTOCOL.md, Registering with an AgentCard), so that a pull agent
 * checks pool tasks against the capabilities, region and tags it is registered with.
 * @throws TypeError naming the bad option
 */
export function compileCard(
  options: { card?: Record<string, unknown>; cardUrl?: string; channel?: string },
  own: { capabilities: string[]; region: string | undefined; tags: string[] },
): CompiledCard {
  const { card, cardUrl } = options;
  if (card !== undefined && cardUrl !== undefined)
    throw new TypeError('give card or cardUrl, not both');
  if (cardUrl !== undefined) {
    if (!/^https?:\/\//.test(cardUrl) || !URL.canParse(cardUrl))
      throw new TypeError(`cardUrl must be an http(s) URL, got ${JSON.stringify(cardUrl)}`);
    // A pull agent checks pool tasks against its placement: it must know its card.
    if (options.channel === 'pull')
      throw new TypeError('a pull agent takes its card inline (card), not by cardUrl');
    return { card, cardUrl, ...own };
  }
  if (card === undefined) return { card, cardUrl, ...own };
  try {
    const merged = mergeCard(own, readAgentCard(card));
    return {
      card,
      cardUrl,
      capabilities: merged.capabilities,
      region: merged.region,
      tags: merged.tags,
    };
  } catch (err: unknown) {
    if (isInvalidCardError(err)) throw new TypeError(err.message, { cause: err });
    throw err;
  }
}
