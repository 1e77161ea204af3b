import vm from 'node:vm';

/** One matching line: its 1-based number, where it starts and ends in the text, and the match column. */
export interface LineMatch {
  line: number;
  start: number;
  end: number;
  column: number;
}

/** The pattern ran past its time budget on one text: it most likely backtracks catastrophically. */
export class ScanTimeoutError extends Error {
  override name = 'ScanTimeoutError';
}

/** Scans a text line by line, at most `limit` matching lines; throws {@link ScanTimeoutError}. */
export type LineScanner = (text: string, limit: number) => LineMatch[];

// Each line is matched on its own (so ^ and $ are line anchors), without its "\r", and only in its first
// maxLineChars characters. Returns flat [line, start, end, column] quadruples: cheap to build in the context.
const SCAN = new vm.Script(`(() => {
  const found = [];
  for (let start = 0, line = 1; start < input.length && found.length < limit * 4; line++) {
    let end = input.indexOf('\\n', start);
    if (end === -1) end = input.length;
    const stop = end > start && input.charCodeAt(end - 1) === 13 ? end - 1 : end;
    const match = pattern.exec(input.slice(start, Math.min(stop, start + maxLineChars)));
    if (match !== null) found.push(line, start, stop, match.index);
    start = end + 1;
  }
  return found;
})()`);

/**
 * A {@link LineScanner} for `pattern` (no `g` or `y` flag). With `budgetMs`, each scan runs under vm's
 * timeout, which can stop a regex mid-match: JavaScript regexes backtrack and run synchronously, so
 * `(a+)+$` on a long line would otherwise block the worker's event loop (and its heartbeats) for good.
 */
export function createLineScanner(
  pattern: RegExp,
  options: { maxLineChars: number; budgetMs?: number },
): LineScanner {
  const context = vm.createContext({ pattern, maxLineChars: options.maxLineChars, input: '', limit: 0 });
  return (text, limit) => {
    context.input = text;
    context.limit = limit;
    let flat: number[];
    try {
      flat = (
        options.budgetMs === undefined
          ? SCAN.runInContext(context)
          : SCAN.runInContext(context, { timeout: options.budgetMs })
      ) as number[];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        throw new ScanTimeoutError(`the pattern ran for more than ${options.budgetMs} ms on one file`);
      }
      throw error;
    } finally {
      context.input = '';
    }
    const matches: LineMatch[] = [];
    for (let index = 0; index + 3 < flat.length; index += 4) {
      matches.push({
        line: flat[index] ?? 0,
        start: flat[index + 1] ?? 0,
        end: flat[index + 2] ?? 0,
        column: flat[index + 3] ?? 0,
      });
    }
    return matches;
  };
}
