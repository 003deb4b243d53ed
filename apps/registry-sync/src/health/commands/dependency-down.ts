import { defineScript } from '@agent-reach/service-kit';
import { int, str } from '../../commands/reply-slots.ts';

/** dependency-down-1.lua's reply. */
export interface DependencyDownReply {
  /** The agent was marked now. */
  marked: boolean;
  /** Its status before ('' when gone). */
  previous: string;
}

/** Decodes dependency-down-1.lua's `{ marked, previous status }`. */
export function decodeDependencyDownReply(raw: unknown): DependencyDownReply {
  const s = 'dependency-down-1.lua';
  return { marked: int(s, raw, 0) === 1, previous: str(s, raw, 1) };
}

/** Marks an agent SUSPECT for a dependency flagged down fleet-wide. */
export const dependencyDownScript = defineScript({
  lua: new URL('./dependency-down-1.lua', import.meta.url),
  command: 'reachDependencyDown',
  keys: ['agent'],
  args: ['dependency'],
  decode: decodeDependencyDownReply,
});
