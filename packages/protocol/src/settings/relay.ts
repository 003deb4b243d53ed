import type { SettingsTable } from './define.ts';
import { DEFAULT_PORTS } from './formats.ts';

/**
 * The relay's own settings (apps/relay, docs/ENDPOINTS.md), one row each; with the Redis rows of
 * {@link SHARED_SETTINGS} they are `RelayOptions`.
 */
export const RELAY_SETTINGS = {
  port: {
    env: 'RELAY_PORT',
    type: 'integer',
    minimum: 0,
    maximum: 65535,
    default: DEFAULT_PORTS.relay,
    doc: 'Port of the relay’s own endpoints: `/livez`, `/healthz`, `/metrics`.',
  },
  relayId: {
    env: 'REACH_RELAY_ID',
    type: 'string',
    pattern: '^[A-Za-z0-9_.:-]{1,40}$',
    defaultDoc: 'relay-<pid>-<random>',
    doc: 'Name of this relay in the membership set; a new one each start fences the last one’s agents.',
  },
  registryUrl: {
    env: 'REACH_RELAY_REGISTRY_URL',
    type: 'string',
    format: 'URL',
    default: `http://127.0.0.1:${DEFAULT_PORTS.registry}`,
    doc: 'Base URL of registry-sync: where the relay registers and heartbeats the endpoint agents it serves.',
  },
  relayKey: {
    env: 'REACH_RELAY_KEY',
    type: 'string',
    minLength: 1,
    doc: 'The relay’s API key (role `relay` or `operator`); unset while keys are off.',
  },
  redisAcl: {
    env: 'REACH_RELAY_REDIS_ACL',
    type: 'switch',
    default: false,
    doc: 'Ask registry-sync for a Redis user of the relay’s own (`REACH_AGENT_ACL=on` there): it reaches the declared endpoint agents’ inboxes and control streams only, and acks write-only.',
  },
  leaseMs: {
    env: 'REACH_RELAY_LEASE_MS',
    type: 'integer',
    minimum: 1000,
    default: 10_000,
    doc: 'A relay’s membership lease: renewed every third of it; when it lapses the other relays take its agents.',
  },
  probeIntervalMs: {
    env: 'REACH_ENDPOINT_PROBE_MS',
    type: 'integer',
    minimum: 50,
    default: 500,
    doc: 'How often each endpoint agent is checked: a TCP connect, and a full check every `REACH_ENDPOINT_CHECK_MS`.',
  },
  checkIntervalMs: {
    env: 'REACH_ENDPOINT_CHECK_MS',
    type: 'integer',
    minimum: 100,
    default: 5000,
    doc: 'How often an endpoint agent gets a full check: its `health_url`, its AgentCard, or MCP `ping`.',
  },
  discoverIntervalMs: {
    env: 'REACH_ENDPOINT_DISCOVER_MS',
    type: 'integer',
    minimum: 1000,
    default: 60_000,
    doc: 'How often an A2A card’s skills and an MCP server’s tools are read again.',
  },
  sweepMs: {
    env: 'REACH_RELAY_SWEEP_MS',
    type: 'integer',
    minimum: 50,
    default: 1000,
    doc: 'How often the relay reads every inbox it serves besides its wake-ups (a missed wake-up waits this long at most).',
  },
} as const satisfies SettingsTable;
