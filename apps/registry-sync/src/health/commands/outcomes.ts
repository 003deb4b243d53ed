import { defineScript } from '@agent-reach/service-kit';
import { int, str } from '../../commands/reply-slots.ts';

/** outcomes-1.lua's reply. */
export interface OutcomesReply {
  /** The agent turned SUSPECT now (failed probes in a row). */
  suspected: boolean;
  /** A passed probe ended its failed-probe SUSPECT. */
  cleared: boolean;
  /** Its status before the call ('' when gone). */
  previous: string;
}

/** Decodes outcomes-1.lua's `{ suspected, cleared, previous status }`. */
export function decodeOutcomesReply(raw: unknown): OutcomesReply {
  const s = 'outcomes-1.lua';
  return {
    suspected: int(s, raw, 0) === 1,
    cleared: int(s, raw, 1) === 1,
    previous: str(s, raw, 2),
  };
}

/** Appends outcomes to an agent's health window; failed deep probes in a row make it SUSPECT. */
export const outcomesScript = defineScript({
  lua: new URL('./outcomes-1.lua', import.meta.url),
  command: 'reachOutcomes',
  pipelined: true,
  keys: ['agent'],
  args: ['letters', 'window', 'probeFailures', 'healthCheck'],
  decode: decodeOutcomesReply,
});
