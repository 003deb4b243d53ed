import type { Io } from './context.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * The progress line of a long wait, on stderr. On a terminal it redraws in place with a spinner;
 * elsewhere (`--progress` into a file or pipe) it writes a line only when the text changes.
 */
export class ProgressLine {
  private frame = 0;
  private last = '';
  private drawn = false;

  constructor(
    private readonly io: Io,
    private readonly enabled: boolean,
  ) {}

  /** Shows `text` (e.g. `task 7f3c… sent → received · 1.2 s`). */
  update(text: string): void {
    if (!this.enabled) return;
    if (this.io.stderrIsTTY) {
      this.frame = (this.frame + 1) % FRAMES.length;
      this.io.err(`\r${FRAMES[this.frame] ?? ''} ${text}\x1b[K`);
      this.drawn = true;
    } else {
      const key = text.replace(/ · [^·]*$/, '');
      if (key !== this.last) this.io.err(`${text}\n`);
      this.last = key;
    }
  }

  /** Clears the line on a terminal, so what follows starts on a clean line. */
  done(): void {
    if (this.drawn) this.io.err('\r\x1b[K');
    this.drawn = false;
  }
}
