import { defineScript } from '@agent-reach/service-kit';
import { ScriptReplyError } from '@agent-reach/protocol';

/** pass-mark-1.lua's reply: Redis time now and the previous pass's (0 when none was marked). */
export interface PassMark {
  nowMs: number;
  previousMs: number;
}

/** Records a housekeeping pass on Redis time and returns the one before it. */
export const passMarkScript = defineScript({
  lua: new URL('./pass-mark-1.lua', import.meta.url),
  command: 'reachPassMark',
  keys: ['mark'],
  args: [],
  decode: (raw): PassMark => {
    if (!Array.isArray(raw) || raw.length !== 2 || !raw.every((v) => Number.isInteger(v)))
      throw new ScriptReplyError('pass-mark-1.lua', raw, 'not two times');
    return { nowMs: raw[0] as number, previousMs: raw[1] as number };
  },
});
