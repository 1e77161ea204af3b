import { inForeground } from './foreground.js';

/**
 * While `work` runs in a terminal, Ctrl-C is read as a key (raw mode) instead of sent as a signal,
 * and handed to this process's SIGINT listeners as the signal would be. The terminal sends SIGINT to
 * its whole foreground process group: under `npx keel` that group holds npm and its `sh -c`
 * wrapper, the shell dies of it, and npm exits 130 at once while Keel still asks "cancel or
 * detach?" and, detached, exits 0 unseen. As a key it reaches Keel alone. Only in the terminal's
 * foreground: a background job's Ctrl-C is not its own, and leaves its signals as they are.
 */
export async function withCtrlCKey<T>(work: () => Promise<T>): Promise<T> {
  const input = process.stdin;
  // A background job (`keel worker &`) must not touch the terminal: the driver would stop it.
  if (!input.isTTY || !inForeground()) return work();
  const setRawMode = input.setRawMode.bind(input);
  const onData = (chunk: Buffer | string): void => {
    // An open line editor reads Ctrl-C itself (it clears the line or answers the prompt): one key,
    // one meaning.
    // Handled after this chunk has reached every listener: a prompt the handler opens must not read
    // the same Ctrl-C (a closed line editor's key decoder may still be listening).
    if (editorsOpen === 0 && chunk.includes('\u0003')) queueMicrotask(() => interrupt(setRawMode));
  };
  // A prompt's readline turns raw mode off and pauses stdin when it closes; Ctrl-C must stay a key
  // (and keep being read) until `work` is done.
  const stayFlowing = (): void => void input.resume();
  input.setRawMode = () => setRawMode(true);
  restoreRaw = () => setRawMode(false);
  setRawMode(true);
  input.on('data', onData).on('pause', stayFlowing).resume();
  try {
    return await work();
  } finally {
    input.off('data', onData).off('pause', stayFlowing);
    input.setRawMode = setRawMode;
    restoreRaw = undefined;
    setRawMode(false);
    input.pause();
  }
}

/** Turns raw mode off while {@link withCtrlCKey} holds it on; set only meanwhile. */
let restoreRaw: (() => void) | undefined;

/**
 * Gives the terminal back its usual mode before this process ends by a signal it raises itself: a
 * process that has had a listener for the signal dies without Node's own terminal reset.
 */
export function restoreTerminal(): void {
  restoreRaw?.();
}

let editorsOpen = 0;

/**
 * Marks a line editor that handles Ctrl-C itself as open until the returned function is called:
 * meanwhile {@link withCtrlCKey} leaves the key to it.
 */
export function lineEditorOpen(): () => void {
  editorsOpen += 1;
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    editorsOpen -= 1;
  };
}

/** Ctrl-C: the process's SIGINT listeners decide; with none, it dies of SIGINT as it would have. */
function interrupt(setRawMode: (mode: boolean) => unknown): void {
  if (process.listenerCount('SIGINT') > 0) {
    process.emit('SIGINT');
    return;
  }
  setRawMode(false);
  process.kill(process.pid, 'SIGINT');
}
