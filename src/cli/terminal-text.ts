import { stripVTControlCharacters } from 'node:util';

/** `1 turn`, `2 turns`: a count with its noun in the right number. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}

// Control characters other than newline and tab, C1 included (0x9b starts a CSI on some terminals).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu;

/**
 * Text the model or a tool wrote, made safe to print: escape sequences are dropped and other control
 * characters shown as `�`, so a hostile output cannot clear the screen, move the cursor, retitle the
 * window or write the clipboard (OSC 52). Newlines and tabs stay; `singleLine` folds all whitespace
 * runs into one space, for previews.
 */
export function printable(text: string, options: { singleLine?: boolean } = {}): string {
  const stripped = stripVTControlCharacters(text).replace(/\r\n?/gu, '\n');
  if (options.singleLine) return stripped.replace(/\s+/gu, ' ').replace(CONTROLS, '�').trim();
  return stripped.replace(CONTROLS, '�');
}

// East Asian wide and fullwidth ranges and emoji: two columns each on a terminal.
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;
const ZERO_WIDTH = /\p{Mn}|\p{Me}|[\u200b-\u200f\u2060]|\ufe0f/u;

/** Columns a character takes on a terminal. */
function columnsOf(character: string): number {
  if (ZERO_WIDTH.test(character)) return 0;
  return WIDE.test(character) ? 2 : 1;
}

/** Columns `text` (one line, no escape sequences) takes on a terminal. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const character of text) width += columnsOf(character);
  return width;
}

/** `text` cut to at most `columns` terminal columns, ending in `…` when something was cut. */
export function cutToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  let width = 0;
  let cut = '';
  for (const character of text) {
    const next = columnsOf(character);
    if (width + next > columns - 1) break;
    cut += character;
    width += next;
  }
  return `${cut}…`;
}

/** The end of `text` that fits in `columns`, after a leading `…` when some of it is cut. */
export function tailToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  let width = 1;
  let tail = '';
  for (const character of [...text].reverse()) {
    const next = columnsOf(character);
    if (width + next > columns) break;
    tail = character + tail;
    width += next;
  }
  return `…${tail}`;
}
