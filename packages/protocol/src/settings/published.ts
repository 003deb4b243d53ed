import { publishedOf, type FollowedName, type PublishedName } from './define.ts';
import { REGISTRY_SETTINGS } from './registry.ts';
import { SHARED_SETTINGS } from './shared.ts';

/** The settings registry-sync reads: the shared ones and its own. */
type RegistryTable = typeof SHARED_SETTINGS & typeof REGISTRY_SETTINGS;

/** A setting registry-sync publishes (its row is marked `published`). */
export type PublishedSettingName = PublishedName<RegistryTable>;

/**
 * The settings registry-sync owns and publishes under `keys.settings()` for routers and tools:
 * option name → environment variable, which is also the field of the published hash
 * (`HGET reach:settings REACH_OFFLINE_MS`). Leases, retries, the watermark and retention must
 * agree across processes, so registry-sync's values win over a router's own. The rows marked
 * `published` in the tables.
 */
export const PUBLISHED_SETTINGS = Object.freeze(
  publishedOf({ ...SHARED_SETTINGS, ...REGISTRY_SETTINGS }),
) as { readonly [K in PublishedSettingName]: RegistryTable[K]['env'] };

/** A setting routers take from registry-sync once it is published (`published: 'followed'`). */
export type FollowedSettingName = FollowedName<typeof SHARED_SETTINGS>;

/** The settings routers take from registry-sync, in the order of the shared table. */
export const FOLLOWED_SETTINGS = Object.freeze(
  Object.keys(publishedOf(SHARED_SETTINGS, 'followed')),
) as readonly FollowedSettingName[];

/** The values registry-sync publishes, by option name. */
export type PublishedSettings = { [K in PublishedSettingName]: number };

/** Fields of the published hash besides the settings. */
export const PublishedSettingsField = {
  /** The registry-sync instance that wrote the hash last. */
  publishedBy: 'published_by',
  /** When it did, epoch ms of its clock. */
  publishedAt: 'published_at',
} as const;

/** The hash registry-sync writes: every published setting, who wrote it and when. */
export function encodeSettings(
  values: PublishedSettings,
  publishedBy: string,
  publishedAt: number,
): Record<string, string> {
  const hash: Record<string, string> = {
    [PublishedSettingsField.publishedBy]: publishedBy,
    [PublishedSettingsField.publishedAt]: String(publishedAt),
  };
  for (const [name, env] of Object.entries(PUBLISHED_SETTINGS))
    hash[env] = String(values[name as PublishedSettingName]);
  return hash;
}

/**
 * Reads the published hash (as `HGETALL` returns it); undefined when nothing is published. A
 * field that is missing or not a finite number ≥ 0 is left out, so a reader keeps its own value.
 */
export function decodeSettings(
  hash: Record<string, string> | null | undefined,
): Partial<PublishedSettings> | undefined {
  if (!hash || Object.keys(hash).length === 0) return undefined;
  const out: Partial<PublishedSettings> = {};
  for (const [name, env] of Object.entries(PUBLISHED_SETTINGS)) {
    const text = hash[env];
    const value = text === undefined || text === '' ? NaN : Number(text);
    if (Number.isFinite(value) && value >= 0) out[name as PublishedSettingName] = value;
  }
  return out;
}
