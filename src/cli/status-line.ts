import type { RunState } from '../contract/run-state.js';
import { cutToWidth, displayWidth, plural, tailToWidth } from './terminal-text.js';

/** Where following a run prints: durable lines, and in a live terminal one status line below them. */
export interface ProgressDisplay {
  /** A durable line (an event); in a live terminal cut to its width, so it never wraps. */
  line(text: string): void;
  /** A durable line printed whole (the answer), status line out of its way. */
  text(text: string): void;
  /** What the run is doing now; `undefined` when no worker answers its state query. */
  status(state: RunState | undefined): void;
  /**
   * The line the model is writing now, shown live in the status line's place (only in a live
   * terminal); `undefined` when it is not writing.
   */
  typing(text: string | undefined): void;
  /** Takes the status line away for good: before the answer, before the command ends. */
  close(): void;
}

/**
 * Whether `stream` is a terminal that may be drawn on: a TTY, `NO_COLOR` unset or empty, and `TERM`
 * not `dumb`. Anything else (a pipe, a file, a CI log) gets plain lines and no escape sequence at all.
 */
export function liveTerminal(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}

/**
 * The display for following a run: plain `write` lines when stdout is not a live terminal, else a
 * status line redrawn in place below the durable lines. `since` is when the elapsed time counts from.
 */
export function progressDisplay(write: (line: string) => void, since: number): ProgressDisplay {
  if (!liveTerminal(process.stdout))
    return {
      line: write,
      text: write,
      status: () => undefined,
      typing: () => undefined,
      close: () => undefined,
    };
  return new StatusLine(process.stdout, since);
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;
const CLEAR_LINE = '\r\u001b[2K';
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';
/**
 * Auto-wrap off while the status line is written, on again after (DECAWM): a line drawn at the old
 * width after the terminal narrowed but before this process heard of it (SIGWINCH comes later, on a
 * loaded machine much later) is cut at the margin instead of wrapping onto rows that the redraw after
 * the resize would not know to clear.
 */
const NO_WRAP = '\u001b[?7l';
const WRAP = '\u001b[?7h';

/** What the run is doing, as the status line says it. */
export function phaseOf(state: RunState | undefined): string {
  if (state === undefined) return 'waiting for a worker';
  const waiting = new Set(state.pendingApprovals.map((pending) => pending.callId));
  switch (state.phase) {
    case 'starting':
      return 'starting';
    case 'thinking':
      return 'thinking';
    case 'acting': {
      const running = state.pendingCalls.filter((call) => !waiting.has(call.callId));
      return running.length > 0
        ? `running ${[...new Set(running.map((call) => call.name))].join(', ')}`
        : 'running tools';
    }
    case 'awaiting_approval':
      return `waiting for approval: ${[...new Set(state.pendingApprovals.map((pending) => pending.name))].join(', ')}`;
    case 'idle':
      return 'waiting for a message';
    case 'finished':
      return 'finishing';
  }
}

/** `7s`, `2m05s`, `1h02m`. */
export function elapsedText(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** The status line's words: phase, turn, elapsed time, tokens and, when known, cost. */
export function statusText(state: RunState | undefined, elapsedMs: number): string {
  const parts = [phaseOf(state)];
  if (state !== undefined && state.turn > 0) parts.push(`turn ${state.turn}/${state.maxTurns}`);
  parts.push(elapsedText(elapsedMs));
  if (state !== undefined) {
    parts.push(plural(state.usage.totalTokens, 'token'));
    if (state.costUsd !== null) parts.push(`$${state.costUsd.toFixed(4)}`);
  }
  return parts.join(' · ');
}

/** Live status lines drawn now, and how many prompts hold them (see {@link pauseProgress}). */
const drawn = new Set<StatusLine>();
let pausedBy = 0;
const withdrawals = new Set<() => void>();

/**
 * Stops all progress output while a prompt waits for a person's answer, so the prompt stays the
 * last thing on the screen: the status line is taken away and durable lines wait. Returns the
 * function that resumes (printing what waited). `withdraw`, if given, is how the prompt takes itself
 * back should the run end before the answer (see {@link withdrawPrompts}).
 */
export function pauseProgress(withdraw?: () => void): () => void {
  pausedBy += 1;
  if (withdraw) withdrawals.add(withdraw);
  for (const line of drawn) line.pause();
  let resumed = false;
  return () => {
    if (resumed) return;
    resumed = true;
    if (withdraw) withdrawals.delete(withdraw);
    pausedBy -= 1;
    if (pausedBy > 0) return;
    for (const line of drawn) line.resume();
    for (const answered of closeWaiters.splice(0)) answered();
  };
}

const closeWaiters: Array<() => void> = [];

/** Whether a prompt holds the progress output now (see {@link pauseProgress}). */
export function promptOpen(): boolean {
  return pausedBy > 0;
}

/** Resolves once no prompt holds the progress output: another prompt waits for that, never opens on top. */
export function promptsClosed(): Promise<void> {
  if (pausedBy === 0) return Promise.resolve();
  return new Promise((resolve) => closeWaiters.push(resolve));
}

/** The run ended while prompts were open: their question is moot, so they take themselves back. */
export function withdrawPrompts(): void {
  for (const withdraw of [...withdrawals]) withdraw();
}

/**
 * One status line at the bottom of a terminal, redrawn in place (a spinner frame every 100 ms) while
 * durable lines are printed above it. Anything else written to stderr meanwhile (a worker's warning,
 * a note) is let through above it too, instead of being smeared into it.
 */
class StatusLine implements ProgressDisplay {
  readonly #out: NodeJS.WriteStream;
  readonly #since: number;
  readonly #timer: NodeJS.Timeout;
  readonly #onResize = (): void => this.#redrawResized();
  readonly #stderrWrite: typeof process.stderr.write | undefined;
  #state: RunState | undefined;
  #typing: string | undefined;
  #known = false;
  #shown = false;
  /** Columns the status line took when last drawn. */
  #drawnWidth = 0;
  #paused = false;
  #closed = false;
  #frame = 0;
  readonly #waiting: string[] = [];

  constructor(out: NodeJS.WriteStream, since: number) {
    this.#out = out;
    this.#since = since;
    this.#paused = pausedBy > 0;
    drawn.add(this);
    this.#timer = setInterval(() => {
      this.#frame = (this.#frame + 1) % SPINNER.length;
      this.#draw();
    }, FRAME_MS);
    // The spinner must never keep the command alive.
    this.#timer.unref();
    out.on('resize', this.#onResize);
    if (process.stderr.isTTY) {
      // Kept unbound to be put back exactly as it was; called with `apply` on stderr.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const original = process.stderr.write;
      this.#stderrWrite = original;
      process.stderr.write = ((...args: Parameters<typeof original>) => {
        this.#erase();
        const written = original.apply(process.stderr, args);
        this.#draw();
        return written;
      }) as typeof original;
    }
  }

  line(text: string): void {
    this.#print(cutToWidth(text, this.#columns()));
  }

  text(text: string): void {
    this.#print(text);
  }

  status(state: RunState | undefined): void {
    this.#state = state;
    this.#known = true;
    this.#draw();
  }

  typing(text: string | undefined): void {
    this.#typing = text;
    this.#draw();
  }

  pause(): void {
    this.#erase();
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    for (const text of this.#waiting.splice(0)) this.#print(text);
    this.#draw();
  }

  close(): void {
    if (this.#closed) return;
    // Lines that waited for a prompt still belong to the record.
    this.#paused = false;
    for (const text of this.#waiting.splice(0)) this.#print(text);
    this.#erase();
    this.#closed = true;
    clearInterval(this.#timer);
    this.#out.removeListener('resize', this.#onResize);
    if (this.#stderrWrite) process.stderr.write = this.#stderrWrite;
    drawn.delete(this);
  }

  #columns(): number {
    // Read at each use: Node updates `columns` when the terminal is resized.
    return this.#out.columns > 0 ? this.#out.columns : 80;
  }

  #print(text: string): void {
    if (this.#closed) return void this.#out.write(text + '\n');
    if (this.#paused) return void this.#waiting.push(text);
    this.#erase();
    this.#out.write(text + '\n');
    this.#draw();
  }

  #erase(): void {
    if (!this.#shown) return;
    this.#out.write(CLEAR_LINE);
    this.#shown = false;
  }

  #draw(): void {
    if (this.#closed || this.#paused || !this.#known) return;
    // One column short of the width: a full line would leave the cursor waiting to wrap.
    const prefix = `${SPINNER[this.#frame]} `;
    const text =
      this.#typing === undefined
        ? cutToWidth(`${prefix}${statusText(this.#state, Date.now() - this.#since)}`, this.#columns() - 1)
        : // The newest words matter while the model writes: the line's end is shown, not its start.
          `${prefix}${tailToWidth(this.#typing, this.#columns() - 1 - displayWidth(prefix))}`;
    this.#out.write(`${CLEAR_LINE}${NO_WRAP}${DIM}${text}${RESET}${WRAP}`);
    this.#shown = true;
    this.#drawnWidth = displayWidth(text);
  }

  /**
   * After a resize: a terminal that got narrower rewraps the old status line over several rows, so
   * all of them are cleared (as terminals that reflow, the common ones and tmux, need) before it is
   * drawn again at the new width.
   */
  #redrawResized(): void {
    if (this.#shown) {
      const rows = Math.ceil(this.#drawnWidth / this.#columns());
      if (rows > 1) this.#out.write(`\u001b[${rows - 1}A`);
      this.#out.write('\r\u001b[0J');
      this.#shown = false;
    }
    this.#draw();
  }
}
