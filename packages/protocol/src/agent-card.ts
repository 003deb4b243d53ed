import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ID_PATTERN, isValidId } from './ids.ts';
import { PROBE_CAPABILITY } from './fields.ts';

/**
 * URI of the AgentCard extension that carries Agent-Reach placement: `params.region` (a region
 * name) and `params.tags` (routing tags), declared in the card's `capabilities.extensions`.
 * A2A cards have no region or routing tags of their own.
 */
export const PLACEMENT_EXTENSION_URI = 'urn:agent-reach:placement:v1';

/** Most capabilities, tags and meta keys a registration holds (as `RegisterBody` allows). */
const MAX_CAPABILITIES = 64;
const MAX_TAGS = 64;
const MAX_META_KEYS = 32;

const Text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

/**
 * The least of an A2A AgentCard (0.3 or 1.0) that registration reads: a name and skills with ids
 * that are capability names. Every other field is kept as sent and not checked.
 */
export const AgentCardShape = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256 }),
  description: Text(4096),
  version: Text(64),
  /** A2A 0.3: the agent's preferred endpoint. */
  url: Text(2048),
  /** A2A 1.0: the agent's endpoints, the first preferred. */
  supportedInterfaces: Type.Optional(Type.Array(Type.Object({ url: Text(2048) }))),
  provider: Type.Optional(Type.Object({ organization: Text(256), url: Text(2048) })),
  skills: Type.Array(
    Type.Object({
      id: Type.String({
        pattern: ID_PATTERN,
        description: 'A capability name: letters, digits and _.:- up to 128',
      }),
    }),
    { maxItems: MAX_CAPABILITIES },
  ),
  capabilities: Type.Optional(
    Type.Object({
      extensions: Type.Optional(
        Type.Array(
          Type.Object({
            uri: Type.String(),
            params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          }),
        ),
      ),
    }),
  ),
});
/** An AgentCard as registration reads it (other fields pass through untouched). */
export type AgentCardShape = Static<typeof AgentCardShape>;

const checkCard = TypeCompiler.Compile(AgentCardShape);

/** What a card adds to a registration: capabilities, placement and meta. */
export interface CardRegistration {
  /** The skills' ids, in card order. */
  capabilities: string[];
  /** From the placement extension's `params.region`. */
  region?: string;
  /** From the placement extension's `params.tags`. */
  tags: string[];
  /** `card_name`, `card_description`, `card_version`, `card_provider`, `card_url` when set. */
  meta: Record<string, string>;
}

/** Thrown by {@link readAgentCard} and {@link mergeCard}: the message says what to fix. */
export class InvalidCardError extends Error {
  override readonly name = 'InvalidCardError';
}

/** True when `err` is an {@link InvalidCardError}. */
export function isInvalidCardError(err: unknown): err is InvalidCardError {
  return err instanceof InvalidCardError;
}

/**
 * Checks a card's shape and reads what registration takes from it: each skill's `id` is a
 * capability; region and routing tags come from the {@link PLACEMENT_EXTENSION_URI} extension;
 * name, description, version, provider organization and URL go to meta as `card_*`.
 * Throws {@link InvalidCardError} naming the first bad field.
 */
export function readAgentCard(card: unknown): CardRegistration {
  if (!checkCard.Check(card)) {
    const first = checkCard.Errors(card).First();
    throw new InvalidCardError(
      first
        ? `card${first.path.replaceAll('/', '.')}: ${first.message}`
        : 'card must be a JSON object',
    );
  }
  const capabilities = card.skills.map((s) => s.id);
  if (new Set(capabilities).size !== capabilities.length)
    throw new InvalidCardError('card.skills: two skills have the same id');
  if (capabilities.includes(PROBE_CAPABILITY))
    throw new InvalidCardError(`card.skills: the id ${PROBE_CAPABILITY} is reserved for probes`);
  const placement = card.capabilities?.extensions?.find((e) => e.uri === PLACEMENT_EXTENSION_URI);
  const params = placement?.params ?? {};
  const region = params['region'];
  if (
    region !== undefined &&
    (typeof region !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(region))
  )
    throw new InvalidCardError(
      'card placement extension: params.region must match ^[A-Za-z0-9_.-]{1,64}$',
    );
  const tags = params['tags'] ?? [];
  if (!Array.isArray(tags) || !tags.every(isValidId) || tags.length > MAX_TAGS)
    throw new InvalidCardError(
      'card placement extension: params.tags must be an array of up to 64 ids (^[A-Za-z0-9_.:-]{1,128}$)',
    );
  const meta: Record<string, string> = { card_name: card.name };
  if (card.description) meta['card_description'] = card.description;
  if (card.version) meta['card_version'] = card.version;
  if (card.provider?.organization) meta['card_provider'] = card.provider.organization;
  const url = card.url ?? card.supportedInterfaces?.[0]?.url;
  if (url) meta['card_url'] = url;
  return {
    capabilities,
    ...(typeof region === 'string' ? { region } : {}),
    tags: [...new Set(tags)],
    meta,
  };
}

/** A registration's own fields that a card may add to. */
export interface OwnPlacement {
  capabilities?: readonly string[] | undefined;
  region?: string | undefined;
  tags?: readonly string[] | undefined;
  meta?: Record<string, unknown> | undefined;
}

/**
 * A registration's fields with its card's merged in: capabilities and tags are the union (the
 * registration's first), the registration's own region and meta keys win over the card's.
 * Throws {@link InvalidCardError} when the union passes the registration's limits.
 */
export function mergeCard(
  own: OwnPlacement,
  card: CardRegistration,
): {
  capabilities: string[];
  region?: string;
  tags: string[];
  meta: Record<string, unknown>;
} {
  const capabilities = [...new Set([...(own.capabilities ?? []), ...card.capabilities])];
  if (capabilities.length > MAX_CAPABILITIES)
    throw new InvalidCardError(
      `capabilities and card skills together name ${capabilities.length} capabilities; at most ${MAX_CAPABILITIES}`,
    );
  const tags = [...new Set([...(own.tags ?? []), ...card.tags])];
  if (tags.length > MAX_TAGS)
    throw new InvalidCardError(
      `tags and card tags together hold ${tags.length}; at most ${MAX_TAGS}`,
    );
  const meta = { ...card.meta, ...(own.meta ?? {}) };
  if (Object.keys(meta).length > MAX_META_KEYS)
    throw new InvalidCardError(
      `meta and the card's card_* fields together hold ${Object.keys(meta).length} keys; at most ${MAX_META_KEYS}`,
    );
  const region = own.region ?? card.region;
  return { capabilities, ...(region !== undefined ? { region } : {}), tags, meta };
}
