/** `text` when it has at most `max` characters, else its first `max - 1` followed by `…`. Pure. */
export function shorten(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}
