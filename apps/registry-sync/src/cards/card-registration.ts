import {
  isInvalidCardError,
  mergeCard,
  readAgentCard,
  type RegisterBody,
  type RegisterRequest,
} from '@agent-reach/protocol';
import { httpError } from '@agent-reach/service-kit';
import { fetchCard, type CardFetchLog, type CardFetchSettings } from './card-fetcher.ts';

/** A register request with its card read: the body to register, and the card to keep. */
export interface CardRegistration {
  body: RegisterBody;
  /** The AgentCard as sent or fetched, when the request named one. */
  card?: Record<string, unknown>;
}

/**
 * Reads a register request's AgentCard (inline, or fetched from `card_url`) into the body the
 * registry applies: the card's skills join `capabilities`, its placement extension's tags join
 * `tags`, its region and `card_*` meta fill what the request leaves out (docs/PROTOCOL.md). A card
 * that fails its schema is refused with the schema's message, inline or fetched: a fetched one
 * comes only from a host the operator allowed (`fetchCard`), so the message is the agent's own.
 * Why a fetch failed goes to `log`.
 * @throws INVALID_BODY (no capabilities at all), INVALID_CARD, CARD_URL_NOT_ALLOWED,
 *   CARD_FETCH_FAILED
 */
export async function readCardRegistration(
  request: RegisterRequest,
  settings: CardFetchSettings,
  log: CardFetchLog,
): Promise<CardRegistration> {
  const { card, card_url: cardUrl, capabilities, ...rest } = request;
  if (card !== undefined && cardUrl !== undefined)
    throw httpError('INVALID_CARD', 'give card or card_url, not both');
  const raw = card ?? (cardUrl !== undefined ? await fetchCard(cardUrl, settings, log) : undefined);
  if (raw === undefined) {
    if (capabilities === undefined)
      throw httpError(
        'INVALID_BODY',
        'body must have required property capabilities, unless an AgentCard (card or card_url) supplies them',
      );
    return { body: { ...rest, capabilities } };
  }
  let merged: ReturnType<typeof mergeCard>;
  try {
    merged = mergeCard(request, readAgentCard(raw));
  } catch (err: unknown) {
    if (isInvalidCardError(err)) throw httpError('INVALID_CARD', err.message);
    throw err;
  }
  if (merged.capabilities.length === 0)
    throw httpError(
      'INVALID_CARD',
      'the card has no skills and the registration no capabilities: an agent needs at least one',
    );
  const body: RegisterBody = { ...rest, capabilities: merged.capabilities, meta: merged.meta };
  if (merged.tags.length > 0) body.tags = merged.tags;
  if (merged.region !== undefined) body.region = merged.region;
  return { body, card: raw as Record<string, unknown> };
}
