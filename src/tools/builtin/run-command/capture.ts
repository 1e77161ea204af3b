import { StringDecoder } from 'node:string_decoder';

/** One output stream, held in bounded memory: its first and last `keep` characters and its size. */
export class Capture {
  bytes = 0;
  characters = 0;
  binary = false;
  #head = '';
  #tail = '';
  readonly #decoder = new StringDecoder('utf8');

  constructor(private readonly keep: number) {}

  /** Characters the rendered text needs (none for binary output, which becomes a notice). */
  get size(): number {
    return this.binary ? 0 : this.characters;
  }

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (chunk.includes(0)) this.binary = true;
    this.#append(this.#decoder.write(chunk));
  }

  /** Decodes what is left of a character split across the last chunk; call once, after the stream ended. */
  end(): void {
    this.#append(this.#decoder.end());
  }

  /** The start of the stream (up to `keep` characters), for messages about a sandbox that did not start. */
  get head(): string {
    return this.#head;
  }

  /** The stream as a report section, cut to `budget` characters with its head and tail kept. */
  render(name: string, budget: number): string {
    if (this.binary) return `${name}: (binary output, ${this.bytes} bytes, not shown)`;
    if (this.characters === 0) return `${name}: (empty)`;
    let text = this.#head;
    if (this.characters > budget) {
      const head = atLineEnd(cutEnd(this.#head, Math.ceil(budget / 2)));
      const tail = atLineStart(cutStart(this.#tail, Math.floor(budget / 2)));
      text = `${head}\n… ${this.characters - head.length - tail.length} characters omitted …\n${tail}`;
    }
    return `${name}:\n${text.endsWith('\n') ? text.slice(0, -1) : text}`;
  }

  #append(text: string): void {
    this.characters += text.length;
    if (this.#head.length < this.keep) this.#head += text.slice(0, this.keep - this.#head.length);
    this.#tail = text.length >= this.keep ? text.slice(-this.keep) : (this.#tail + text).slice(-this.keep);
  }
}

/** The first `length` characters, not splitting a surrogate pair. */
function cutEnd(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/** `text` up to its last line break (dropped), unless that would keep less than half of it. */
function atLineEnd(text: string): string {
  const end = text.lastIndexOf('\n');
  return end >= text.length / 2 ? text.slice(0, end) : text;
}

/** `text` from after its first line break, unless that would keep less than half of it. */
function atLineStart(text: string): string {
  const start = text.indexOf('\n');
  return start >= 0 && start < text.length / 2 ? text.slice(start + 1) : text;
}

/** The last `length` characters, not splitting a surrogate pair. */
function cutStart(text: string, length: number): string {
  if (length === 0) return '';
  const tail = text.slice(-length);
  const code = tail.charCodeAt(0);
  return code >= 0xdc00 && code <= 0xdfff ? tail.slice(1) : tail;
}
