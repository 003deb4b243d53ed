import { WINDOW_PATTERN } from '@agent-reach/protocol';

// The pattern lives with the settings formats (REACH_TIMELINE_LOOKBACK takes a window too).
export { WINDOW_PATTERN };

/** The longest window the API answers for: 31 days. */
export const MAX_WINDOW_S = 31 * 24 * 3600;

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** A checked window: the InfluxQL duration literal and its length in seconds. */
export interface Window {
  /** e.g. `15m`, usable as an InfluxQL duration literal. */
  literal: string;
  seconds: number;
}

/** Thrown by {@link parseWindow} for a malformed or too long window. */
export class InvalidWindowError extends Error {
  override readonly name = 'InvalidWindowError';
  /** The text that was refused. */
  readonly window: string;
  constructor(window: string, message: string) {
    super(message);
    this.window = window;
  }
}

/** True when `err` is an {@link InvalidWindowError}. */
export function isInvalidWindowError(err: unknown): err is InvalidWindowError {
  return err instanceof InvalidWindowError;
}

/**
 * Parses `15m`, `1h`, `7d`… into a {@link Window}.
 * @throws InvalidWindowError when the text does not match {@link WINDOW_PATTERN} or exceeds {@link MAX_WINDOW_S}.
 */
export function parseWindow(text: string): Window {
  if (!new RegExp(WINDOW_PATTERN).test(text)) {
    throw new InvalidWindowError(
      text,
      `window must be a number and a unit s|m|h|d|w, e.g. 15m; got ${JSON.stringify(text)}`,
    );
  }
  const seconds = Number(text.slice(0, -1)) * (UNIT_S[text.slice(-1)] ?? 1);
  if (seconds > MAX_WINDOW_S) {
    throw new InvalidWindowError(text, `window must be at most 31d; got ${text}`);
  }
  return { literal: text, seconds };
}

/** The `$timeFilter` of a window ending now, exactly as Grafana writes it for a relative range. */
export function timeFilter(window: Window): string {
  return `time >= now() - ${window.literal} and time <= now()`;
}
