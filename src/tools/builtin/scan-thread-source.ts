/**
 * The code of a scan thread (a CommonJS script; see {@link ThreadPoolOptions.source} for why it is a
 * string). Each request is one file: its bytes are decoded as UTF-8 and every line is matched on its
 * own (so `^` and `$` are line anchors), without its "\r", and only in its first `maxLineChars`
 * characters. It replies `{ matches }`, at most `limit` of `{ line, text }` where `text` is the line
 * cut to `shownChars` around the match, or `{ error }` when the pattern threw (e.g. its backtracking
 * stack overflowed). The compiled pattern is kept for the next request with the same one.
 */
export const SCAN_THREAD_SOURCE = String.raw`'use strict';
const { parentPort } = require('node:worker_threads');
let compiled = null;
let compiledKey = '';
parentPort.on('message', (request) => {
  try {
    const key = request.flags + '/' + request.source;
    if (key !== compiledKey) {
      compiled = new RegExp(request.source, request.flags);
      compiledKey = key;
    }
    parentPort.postMessage({ matches: scan(compiled, request) });
  } catch (error) {
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
function scan(pattern, { bytes, limit, maxLineChars, shownChars }) {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const found = [];
  for (let start = 0, line = 1; start < text.length && found.length < limit; line++) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const stop = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    const match = pattern.exec(text.slice(start, Math.min(stop, start + maxLineChars)));
    if (match !== null) found.push({ line, text: excerpt(text.slice(start, stop), match.index, shownChars) });
    start = end + 1;
  }
  return found;
}
function excerpt(line, column, shownChars) {
  if (line.length <= shownChars) return line;
  const from = column < shownChars - 50 ? 0 : column - 50;
  const to = from + shownChars;
  return (from > 0 ? '\u2026' : '') + line.slice(from, to) + (to < line.length ? '\u2026' : '');
}
`;
