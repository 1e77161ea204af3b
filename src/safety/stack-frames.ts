/**
 * A line of a V8 stack trace: `    at fn (/srv/keel/x.js:1:2)`, `    at async file:///x.js:3:4`,
 * `    at new Thing (<anonymous>)`, `    at Array.map (native)`, `    at async Promise.all (index 0)`,
 * and Node's `    ... 4 lines matching cause stack trace ...`. Ordinary prose ("at line 3") is not.
 */
const FRAME =
  /^[ \t]*(?:at [^\n]*?(?::\d+(?::\d+)?\)?|\((?:<anonymous>|native|index \d+)\)|<anonymous>)|\.\.\. \d+ lines? matching cause stack trace \.\.\.)[ \t]*$/;

/** The same frame inside a JSON string, where each line break is written `\n`. */
const ESCAPED_FRAME =
  /\\n[ \t]*at [^\\"\n]*?(?::\d+(?::\d+)?\)?|\((?:<anonymous>|native|index \d+)\))(?=\\n|"|\s|$)/g;

/**
 * The text without stack-trace lines: a tool that puts `error.stack` into the message of a
 * `ToolError` (or an error's `cause` spelled out, or a stack as JSON) must not show the model the worker's code and paths.
 */
export function withoutStackFrames(text: string): string {
  if (!text.includes('at ') && !text.includes('matching cause')) return text;
  const unescaped = text.replace(ESCAPED_FRAME, '');
  const lines = unescaped.split('\n');
  const kept = lines.filter((line) => !FRAME.test(line));
  return kept.length === lines.length ? unescaped : kept.join('\n').trimEnd();
}
