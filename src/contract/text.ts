/** `text` when it has at most `max` characters, else its first `max - 1` followed by `…`. Pure. */
export function shorten(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/**
 * The JSON text of an answer: the answer itself, or the inside of the one fenced code block it is
 * wrapped in (servers without structured outputs, small local models). Pure, so the workflow and
 * the worker read an answer alike.
 */
export function outputJsonText(text: string): string {
  const fenced = /^\s*```[A-Za-z]*\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  return fenced === null ? text : fenced[1]!;
}
