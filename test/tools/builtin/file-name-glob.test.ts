import { describe, expect, it } from 'vitest';
import { compileFileNameGlob } from '../../../src/tools/builtin/file-name-glob.js';
import { ToolError } from '../../../src/tools/tool-error.js';

describe('compileFileNameGlob', () => {
  it.each([
    ['*.ts', 'index.ts', true],
    ['*.ts', 'index.tsx', false],
    ['*.ts', '.ts', true],
    ['*.{ts,tsx}', 'view.tsx', true],
    ['*.{ts,tsx}', 'view.js', false],
    ['{a,b{c,d}}.md', 'bd.md', true],
    ['**/*.md', 'readme.md', true],
    ['?.txt', 'a.txt', true],
    ['?.txt', 'ab.txt', false],
    ['[ab]*', 'apple', true],
    ['[!ab]*', 'apple', false],
    ['[a-c]x', 'bx', true],
    ['[]]', ']', true],
    ['\\*.txt', '*.txt', true],
    ['\\*.txt', 'a.txt', false],
    ['*', '日本語.txt', true],
    ['?.txt', '日.txt', true],
    ['Makefile', 'Makefile', true],
    ['makefile', 'Makefile', false],
  ])('%j against %j: %s', (glob, name, expected) => {
    expect(compileFileNameGlob(glob)(name)).toBe(expected);
  });

  it.each([
    [
      'src/*.ts',
      'glob "src/*.ts" has a "/": it filters file names only (like "*.ts"); put the directory in path',
    ],
    ['**/', 'glob is empty; give a file name pattern like "*.ts"'],
    ['*.{ts', 'glob "*.{ts" has a "{" without "}"'],
    ['*.ts}', 'glob "*.ts}" has a "}" without "{"'],
    ['[a', 'glob "[a" has a "[" without "]"'],
    [
      '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}',
      'glob "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}" expands to more than 64 patterns',
    ],
  ])('refuses %j', (glob, message) => {
    expect(() => compileFileNameGlob(glob)).toThrow(new ToolError(message));
  });

  it('matches in time proportional to name times pattern, never backtracking exponentially', () => {
    const matches = compileFileNameGlob(`${'*a'.repeat(30)}*b`);
    const started = performance.now();
    expect(matches('a'.repeat(255))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
