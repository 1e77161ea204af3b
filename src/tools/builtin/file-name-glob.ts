import { ToolError } from '../tool-error.js';

/** Most alternatives `{a,b}` groups may expand to. */
const MAX_ALTERNATIVES = 64;

type Token =
  | { kind: 'star' }
  | { kind: 'any' }
  | { kind: 'literal'; char: string }
  | { kind: 'class'; negated: boolean; ranges: [string, string][] };

/**
 * A test for file names from a simple glob: `*`, `?`, `[abc]`, `[!a-z]` and `{ts,tsx}`; a leading
 * `**\/` is allowed and ignored (searches descend anyway). Matching runs in time linear in the name
 * times the pattern, never backtracking exponentially, whatever the glob.
 */
export function compileFileNameGlob(glob: string): (fileName: string) => boolean {
  const pattern = glob.replace(/^(\*\*\/)+/, '');
  if (pattern.includes('/')) {
    throw new ToolError(
      `glob ${JSON.stringify(glob)} has a "/": it filters file names only (like "*.ts"); put the directory in path`,
    );
  }
  if (pattern === '') throw new ToolError('glob is empty; give a file name pattern like "*.ts"');
  const alternatives = expandBraces(pattern, glob).map((alternative) => tokenize(alternative, glob));
  return (fileName) => {
    const chars = Array.from(fileName);
    return alternatives.some((tokens) => matches(tokens, chars));
  };
}

function expandBraces(pattern: string, glob: string): string[] {
  const open = pattern.indexOf('{');
  if (open === -1) {
    if (pattern.includes('}')) throw new ToolError(`glob ${JSON.stringify(glob)} has a "}" without "{"`);
    return [pattern];
  }
  let depth = 0;
  const commas: number[] = [];
  for (let index = open; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === '{') depth++;
    else if (char === ',' && depth === 1) commas.push(index);
    else if (char === '}' && --depth === 0) {
      const bounds = [open, ...commas, index];
      const rest = pattern.slice(index + 1);
      const expanded: string[] = [];
      for (let part = 0; part + 1 < bounds.length; part++) {
        const choice = pattern.slice((bounds[part] ?? 0) + 1, bounds[part + 1]);
        for (const tail of expandBraces(pattern.slice(0, open) + choice + rest, glob)) {
          expanded.push(tail);
          if (expanded.length > MAX_ALTERNATIVES) {
            throw new ToolError(
              `glob ${JSON.stringify(glob)} expands to more than ${MAX_ALTERNATIVES} patterns`,
            );
          }
        }
      }
      return expanded;
    }
  }
  throw new ToolError(`glob ${JSON.stringify(glob)} has a "{" without "}"`);
}

function tokenize(pattern: string, glob: string): Token[] {
  const chars = Array.from(pattern);
  const tokens: Token[] = [];
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index] ?? '';
    if (char === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (char === '?') {
      tokens.push({ kind: 'any' });
    } else if (char === '[') {
      let cursor = index + 1;
      const negated = chars[cursor] === '!' || chars[cursor] === '^';
      if (negated) cursor++;
      const ranges: [string, string][] = [];
      // A "]" right after the opening bracket is a member, not the end.
      for (let first = true; first || chars[cursor] !== ']'; first = false) {
        const from = chars[cursor];
        if (from === undefined) throw new ToolError(`glob ${JSON.stringify(glob)} has a "[" without "]"`);
        const to = chars[cursor + 1] === '-' && chars[cursor + 2] !== ']' ? chars[cursor + 2] : undefined;
        ranges.push([from, to ?? from]);
        cursor += to === undefined ? 1 : 3;
      }
      tokens.push({ kind: 'class', negated, ranges });
      index = cursor;
    } else {
      tokens.push({ kind: 'literal', char: char === '\\' ? (chars[++index] ?? '\\') : char });
    }
  }
  return tokens;
}

function matchesOne(token: Token, char: string): boolean {
  switch (token.kind) {
    case 'any':
      return true;
    case 'literal':
      return token.char === char;
    case 'class':
      return token.ranges.some(([from, to]) => char >= from && char <= to) !== token.negated;
    case 'star':
      return false;
  }
}

/** Greedy matching that backtracks only to the last star: O(name × pattern). */
function matches(tokens: Token[], chars: string[]): boolean {
  let token = 0;
  let char = 0;
  let starToken = -1;
  let starChar = 0;
  while (char < chars.length) {
    const current = tokens[token];
    if (current !== undefined && current.kind !== 'star' && matchesOne(current, chars[char] ?? '')) {
      token++;
      char++;
    } else if (current?.kind === 'star') {
      starToken = token++;
      starChar = char;
    } else if (starToken !== -1) {
      token = starToken + 1;
      char = ++starChar;
    } else {
      return false;
    }
  }
  while (tokens[token]?.kind === 'star') token++;
  return token === tokens.length;
}
