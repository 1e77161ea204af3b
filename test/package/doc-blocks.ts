/**
 * The documentation as the doc tests read it: the pages (README.md, CONTRIBUTING.md, docs/*.md), their
 * fenced code blocks with the line each starts on, their relative links, and the shell commands in a
 * `sh` block, split into words the way a POSIX shell would.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from './packed-project.js';

/** Every documentation page, as a path relative to the repository root. */
export function documentationPages(): string[] {
  const docs = readdirSync(path.join(repositoryRoot, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

/** A fenced code block of a page. */
export interface DocBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word (`ts`, `sh`, `json`, …); '' when the fence has none. */
  language: string;
  /** The info string's second word: an example file the block shows (```ts examples/tools/refund.ts). */
  file: string | undefined;
  /** The `<!-- … -->` comment just before the fence (blank lines between allowed), without its delimiters. */
  marker: string | undefined;
  body: string;
}

/** Where a block or line is, for failure messages: `docs/safety.md:120`. */
export const where = (page: string, line: number): string => `${page}:${line}`;

/** The fenced blocks of `page` in order. A fence left open is an error naming its line. */
export function fencedBlocks(page: string): DocBlock[] {
  const lines = readFileSync(path.join(repositoryRoot, page), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(.*)$/.exec(lines[index]!);
    if (!open) continue;
    const [language = '', file] = open[1]!.trim().split(/\s+/);
    const previous = markerBefore(lines, index);
    const close = lines.findIndex((text, at) => at > index && text === '```');
    if (close === -1) throw new Error(`${where(page, index + 1)}: the code block is never closed`);
    blocks.push({
      page,
      line: index + 1,
      language,
      file,
      marker: previous,
      body: lines.slice(index + 1, close).join('\n') + '\n',
    });
    index = close;
  }
  return blocks;
}

/** The HTML comment that ends on the last non-blank line before line `index`, joined into one line. */
export function markerBefore(lines: string[], index: number): string | undefined {
  let end = index - 1;
  while (end >= 0 && lines[end]!.trim() === '') end--;
  if (end < 0 || !lines[end]!.trimEnd().endsWith('-->')) return undefined;
  let start = end;
  while (start > 0 && !lines[start]!.includes('<!--')) start--;
  const comment = lines.slice(start, end + 1).join(' ');
  return /<!--\s*(.*?)\s*-->\s*$/.exec(comment)?.[1]?.replace(/\s+/g, ' ');
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as `-`. */
export function headingAnchors(page: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const text of readFileSync(path.join(repositoryRoot, page), 'utf8').split('\n')) {
    if (text.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.*)$/.exec(text);
    if (heading)
      anchors.add(
        heading[1]!
          .toLowerCase()
          .replace(/[^\p{L}\p{N}_\- ]/gu, '')
          .replace(/ /g, '-'),
      );
  }
  return anchors;
}

/** Every relative link of `page` (Markdown links and images, `#…` on the same page too), with its line. */
export function relativeLinks(page: string): Array<{ line: number; target: string; anchor?: string }> {
  const lines = readFileSync(path.join(repositoryRoot, page), 'utf8').split('\n');
  const links: Array<{ line: number; target: string; anchor?: string }> = [];
  let fenced = false;
  lines.forEach((text, index) => {
    if (text.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [file = '', anchor] = target!.split('#');
      links.push({ line: index + 1, target: file, ...(anchor === undefined ? {} : { anchor }) });
    }
  });
  return links;
}

/** One command of a shell block: its words after quote removal, and the variables it assigns first. */
export interface ShellCommand {
  line: number;
  /** `NAME=value` words before the command (`OPENAI_API_KEY=sk-... npx keel run …`). */
  environment: Record<string, string>;
  words: string[];
  /** `id=$(keel run …)`: the variable the command's trimmed stdout is assigned to. */
  captureInto: string | undefined;
}

/**
 * The commands of a `sh` block. Supports what the docs use and refuses the rest: `\` continuations,
 * `#` comments, single and double quotes, `"$name"` expansion of variables the block assigned with
 * `name=$(command)`, and leading `NAME=value` assignments. Pipes, `;`, `&&` and redirections are
 * refused, so every command a reader copies is one the test runs or checks.
 */
export function shellCommands(block: DocBlock): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const raw = block.body.split('\n');
  for (let index = 0; index < raw.length; index++) {
    const line = block.line + 1 + index;
    let text = raw[index]!;
    while (text.endsWith('\\') && index + 1 < raw.length) text = text.slice(0, -1) + raw[++index];
    const words = splitWords(text, where(block.page, line));
    if (words.length === 0) continue;
    let captureInto: string | undefined;
    const capture = /^(\w+)=\$\((.*)\)$/.exec(text.trim());
    const parts = capture ? splitWords(capture[2]!, where(block.page, line)) : words;
    if (capture) captureInto = capture[1];
    const environment: Record<string, string> = {};
    while (parts.length > 1 && /^[A-Z_][A-Z0-9_]*=/.test(parts[0]!)) {
      const [name, ...value] = parts.shift()!.split('=');
      environment[name!] = value.join('=');
    }
    commands.push({ line, environment, words: parts, captureInto });
  }
  return commands;
}

/** Splits one command line into words; `$(` is kept whole for the caller, operators are refused. */
function splitWords(text: string, at: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1) throw new Error(`${at}: unclosed single quote`);
      word = (word ?? '') + text.slice(index + 1, end);
      index = end;
    } else if (char === '"') {
      let value = '';
      for (index++; index < text.length && text[index] !== '"'; index++) {
        if (text[index] === '\\' && index + 1 < text.length) value += text[++index];
        else value += text[index];
      }
      if (index >= text.length) throw new Error(`${at}: unclosed double quote`);
      word = (word ?? '') + value;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === '#' && word === undefined) {
      break;
    } else if (char === '$' && text[index + 1] === '(') {
      const end = text.lastIndexOf(')');
      word = (word ?? '') + text.slice(index, end + 1);
      index = end;
    } else if ('|;&<>`'.includes(char)) {
      throw new Error(
        `${at}: "${char}" is not supported in a documented command; write one command per line`,
      );
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** `"$name"` and `$name` words replaced by the variables a block assigned so far. */
export function expandVariables(words: string[], variables: Map<string, string>, at: string): string[] {
  return words.map((word) =>
    word.replace(/\$(\w+)/g, (_, name: string) => {
      const value = variables.get(name);
      if (value === undefined) throw new Error(`${at}: $${name} is not assigned earlier in the block`);
      return value;
    }),
  );
}
