import { describe, expect, it } from 'vitest';
import { reachKeys } from './keys.ts';
import {
  decodeSettings,
  encodeSettings,
  PUBLISHED_SETTINGS,
  setOnly,
  type PublishedSettings,
} from './settings.ts';

const values: PublishedSettings = {
  heartbeatIntervalMs: 5000,
  suspectMs: 15000,
  offlineMs: 30000,
  deliveryLeaseMs: 600000,
  snapshotIntervalMs: 5000,
  dispatchGraceMs: 10000,
  receiptTimeoutMs: 30000,
  maxAttempts: 4,
  retryBaseMs: 2000,
  retryCapMs: 120000,
  watermark: 0.85,
  dlqRetentionS: 604800,
  callbackRetentionS: 604800,
  callbackMaxLen: 100000,
  shards: 1,
  taskShards: 1,
};

describe('published settings', () => {
  it('lives under one key of the key builder', () => {
    expect(reachKeys('p').settings()).toBe('p:settings');
  });

  it('is a hash of environment variable → value that reads back to the same values', () => {
    const hash = encodeSettings(values, 'sync-1', 1700000000000);
    expect(hash).toMatchObject({
      REACH_OFFLINE_MS: '30000',
      REACH_WATERMARK: '0.85',
      published_by: 'sync-1',
      published_at: '1700000000000',
    });
    expect(Object.keys(hash)).toHaveLength(Object.keys(PUBLISHED_SETTINGS).length + 2);
    expect(decodeSettings(hash)).toEqual(values);
  });

  it('reads nothing from an empty hash and leaves out fields that are not numbers', () => {
    expect(decodeSettings({})).toBeUndefined();
    expect(decodeSettings(null)).toBeUndefined();
    expect(
      decodeSettings({ REACH_OFFLINE_MS: 'soon', REACH_SUSPECT_MS: '', REACH_MAX_ATTEMPTS: '3' }),
    ).toEqual({ maxAttempts: 3 });
  });

  it('setOnly drops the keys an environment left unset', () => {
    expect(setOnly({ a: 1, b: undefined, c: 0 })).toEqual({ a: 1, c: 0 });
  });
});
