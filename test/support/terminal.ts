import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { keelEntry } from './cli.js';

const run = promisify(execFile);
// Set before the command starts: a command that exits at once must still leave its screen and status.
const config = path.join(tmpdir(), `keel-tmux-${process.pid}.conf`);
writeFileSync(config, 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 50000\n');

/**
 * A real pseudo-terminal running one command, through tmux: the program sees a TTY on stdin, stdout
 * and stderr, Ctrl-C reaches its whole foreground process group as the terminal driver sends it, and
 * the screen is what a person would see. Each terminal is its own tmux server (`-L`), so tests never
 * share one, and `close()` ends only that server.
 */
export class Terminal {
  readonly #socket: string;
  readonly #statusFile: string;
  #closed = false;

  private constructor(socket: string) {
    this.#socket = socket;
    this.#statusFile = path.join(tmpdir(), `${socket}.status`);
  }

  /**
   * Starts `command` (argv, run without a shell) in a `columns`×`rows` terminal with exactly `env`
   * (plus TERM) in `cwd`. The pane stays after the command exits, so its last screen and exit code can
   * be read.
   */
  static async start(
    command: readonly string[],
    options: { env: NodeJS.ProcessEnv; cwd?: string; columns?: number; rows?: number },
  ): Promise<Terminal> {
    const terminal = new Terminal(`keel-test-${randomUUID().slice(0, 12)}`);
    const environment = Object.entries({
      ...options.env,
      TERM: 'xterm-256color',
      KEEL_TERMINAL_STATUS: terminal.#statusFile,
    }).flatMap(([name, value]) => (value === undefined ? [] : ['-e', `${name}=${value}`]));
    await terminal.#tmux(
      'new-session',
      '-d',
      '-x',
      String(options.columns ?? 120),
      '-y',
      String(options.rows ?? 40),
      ...(options.cwd === undefined ? [] : ['-c', options.cwd]),
      ...environment,
      '--',
      // tmux 3.3 does not keep a dead pane's status: bash records it. A trapped signal is reset to its
      // default in the command, so Ctrl-C reaches it as it would from a shell, and bash, which waits,
      // writes 128+signal when the command dies of one.
      'bash',
      '-c',
      'trap : INT QUIT; "$@"; echo "$?" > "$KEEL_TERMINAL_STATUS"',
      'bash',
      ...command,
    );
    return terminal;
  }

  /** Starts `keel <args>` of this checkout in a terminal. */
  static keel(
    args: readonly string[],
    options: { env: NodeJS.ProcessEnv; cwd?: string; columns?: number; rows?: number },
  ): Promise<Terminal> {
    return Terminal.start([process.execPath, keelEntry(), ...args], options);
  }

  /** The visible screen, one string per row, trailing blanks removed. */
  async screen(): Promise<string> {
    const { stdout } = await this.#tmux('capture-pane', '-p', '-J');
    return withoutTrailer(stdout);
  }

  /** Everything written so far, scrollback included. */
  async scrollback(): Promise<string> {
    const { stdout } = await this.#tmux('capture-pane', '-p', '-J', '-S', '-');
    return withoutTrailer(stdout);
  }

  /**
   * Resolves with the screen (scrollback included) once it matches `expected`, looking every 50 ms;
   * rejects with the screen when the command exits without it or after `timeoutMs`. Polls an
   * observable condition; the bound only turns a hang into a readable failure.
   */
  async waitFor(expected: string | RegExp, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    const matches = (text: string): boolean =>
      typeof expected === 'string' ? text.includes(expected) : expected.test(text);
    for (;;) {
      const text = await this.scrollback();
      if (matches(text)) return text;
      const exited = await this.exitCode();
      if (exited !== undefined && matches(await this.scrollback())) return this.scrollback();
      if (exited !== undefined || Date.now() > deadline)
        throw new Error(
          `${exited === undefined ? 'timed out' : `exited with ${exited}`} waiting for ${String(expected)}; screen:\n${text}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Types text (literally, no key names) into the terminal. */
  async type(text: string): Promise<void> {
    await this.#tmux('send-keys', '-l', text);
  }

  /** Presses keys by tmux name: `Enter`, `C-c`, `Up`, … */
  async press(...keys: string[]): Promise<void> {
    await this.#tmux('send-keys', ...keys);
  }

  /**
   * The command's exit status once it has exited and tmux has read all its output (the pane is
   * dead), else undefined.
   */
  async exitCode(): Promise<number | undefined> {
    let status: string;
    try {
      status = readFileSync(this.#statusFile, 'utf8').trim();
    } catch {
      return undefined;
    }
    const { stdout } = await this.#tmux('display-message', '-p', '#{pane_dead}');
    return status !== '' && stdout.trim() === '1' ? Number(status) : undefined;
  }

  /** Waits for the command to exit and returns its exit status (polls, bounded by `timeoutMs`). */
  async exited(timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const code = await this.exitCode();
      if (code !== undefined) return code;
      if (Date.now() > deadline)
        throw new Error(`still running after ${timeoutMs} ms; screen:\n${await this.screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Resizes the terminal, as a person dragging its window would: the program gets SIGWINCH. */
  async resize(columns: number, rows = 40): Promise<void> {
    await this.#tmux('resize-window', '-x', String(columns), '-y', String(rows));
  }

  /** The PID of the pane's process (the bash that runs the command; the leader of its process group). */
  async pid(): Promise<number> {
    const { stdout } = await this.#tmux('display-message', '-p', '#{pane_pid}');
    return Number(stdout.trim());
  }

  /** Ends this terminal's tmux server and with it the command, if still running. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tmux('kill-server').catch(() => undefined);
    rmSync(this.#statusFile, { force: true });
  }

  #tmux(...args: string[]): Promise<{ stdout: string; stderr: string }> {
    return run('tmux', ['-L', this.#socket, '-f', config, ...args], { encoding: 'utf8' });
  }
}

/** The screen without tmux's "Pane is dead" line and trailing blanks. */
function withoutTrailer(screen: string): string {
  return screen.replace(/\n?Pane is dead \(.*\)\s*$/u, '').replace(/\s+$/u, '');
}
