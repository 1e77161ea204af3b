import { mkdir, rename, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import {
  SEARCH_FILES_MAX_FILE_BYTES,
  SEARCH_FILES_MAX_OUTPUT_CHARS,
  SEARCH_FILES_REGEX_BUDGET_MS,
  SEARCH_FILES_SHOWN_LINE_CHARS,
  createSearchFilesTool,
} from '../../../src/tools/builtin/search-files.js';
import { scanThreads } from '../../../src/tools/builtin/line-scanner.js';
import type { ToolContext } from '../../../src/tools/define-tool.js';
import {
  OUTSIDE_SECRET,
  swapBeforeOpeningSubdirectory,
  traversals,
  useEscapeFixture,
} from '../../support/escape-fixture.js';
import { runBuiltin } from '../../support/run-builtin.js';
import { toolError } from '../../support/observations.js';

/**
 * The escape fixture's workspace, plus:
 *   ws/src/a.ts              alpha on lines 1 and 3
 *   ws/src/b.tsx             Alpha on line 2
 *   ws/docs/readme.md        alpha on line 1
 *   ws/.git/config, ws/node_modules/dep/index.js, ws/.keel/state.json   all mention alpha
 */
const escape = useEscapeFixture('search-files');
const { inside } = escape;

beforeEach(async () => {
  const layout: Record<string, string> = {
    'src/a.ts': 'const alpha = 1;\nconst beta = 2;\n// alpha again\n',
    'src/b.tsx': 'export {};\nconst Alpha = <div />;\n',
    'docs/readme.md': 'alpha docs\r\nmore\r\n',
    '.git/config': 'alpha',
    'node_modules/dep/index.js': 'alpha',
    '.keel/state.json': 'alpha',
  };
  for (const [file, content] of Object.entries(layout)) {
    await mkdir(path.dirname(inside(file)), { recursive: true });
    await writeFile(inside(file), content);
  }
});

function search(args: Record<string, unknown>): Promise<Observation> {
  return runBuiltin(escape.fixture.workspace, 'search_files', args);
}

/** The output of a search that must succeed. */
async function output(args: Record<string, unknown>): Promise<string> {
  const observation = await search(args);
  if (!observation.ok) throw new Error(`search failed: ${observation.message}`);
  return observation.output;
}

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    callId: 'call_1',
    idempotencyKey: 'run:call_1',
    heartbeat: () => undefined,
    once: (_step, effect) => Promise.resolve(effect()),
    ...overrides,
  };
}

const defaults = { regex: false, path: '.', caseSensitive: true, maxResults: 100 };

describe('searchFiles', () => {
  it('is a read-only tool named search_files', () => {
    expect(createSearchFilesTool(escape.fixture.workspace)).toMatchObject({
      name: 'search_files',
      readOnly: true,
      timeoutSeconds: 60,
    });
  });

  it('finds text as "file:line: text" lines in path order, skipping .git, node_modules and .keel', async () => {
    expect(await output({ pattern: 'alpha' })).toBe(
      ['docs/readme.md:1: alpha docs', 'src/a.ts:1: const alpha = 1;', 'src/a.ts:3: // alpha again'].join(
        '\n',
      ),
    );
  });

  it('ignores case when asked', async () => {
    expect(await output({ pattern: 'ALPHA', caseSensitive: false, path: 'src' })).toBe(
      [
        'src/a.ts:1: const alpha = 1;',
        'src/a.ts:3: // alpha again',
        'src/b.tsx:2: const Alpha = <div />;',
      ].join('\n'),
    );
  });

  it('takes a plain pattern literally, special characters included', async () => {
    await writeFile(inside('special.txt'), 'a.b\naxb\n(x+)*\n');
    expect(await output({ pattern: 'a.b', path: 'special.txt' })).toBe('special.txt:1: a.b');
    expect(await output({ pattern: '(x+)*', path: 'special.txt' })).toBe('special.txt:3: (x+)*');
  });

  it('searches a JavaScript regular expression, one line at a time', async () => {
    expect(await output({ pattern: '^const \\w+ = \\d;$', regex: true })).toBe(
      ['src/a.ts:1: const alpha = 1;', 'src/a.ts:2: const beta = 2;'].join('\n'),
    );
    expect(await output({ pattern: 'docs$', regex: true })).toBe('docs/readme.md:1: alpha docs');
  });

  it('accepts escapes that only older regular expressions allow', async () => {
    expect(await output({ pattern: 'const\\ alpha\\:?', regex: true })).toBe('src/a.ts:1: const alpha = 1;');
  });

  it('refuses an invalid regular expression with the reason', async () => {
    const observation = await search({ pattern: 'alpha(', regex: true });
    expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
    expect(observation.ok ? '' : observation.message).toMatch(
      /^pattern is not a valid regular expression: .*Unterminated group.*set regex to false/,
    );
  });

  it('filters file names with a glob', async () => {
    expect(await output({ pattern: 'lpha', caseSensitive: false, glob: '*.tsx' })).toBe(
      'src/b.tsx:2: const Alpha = <div />;',
    );
    expect(await output({ pattern: 'lpha', caseSensitive: false, glob: '*.{md,tsx}' })).toBe(
      ['docs/readme.md:1: alpha docs', 'src/b.tsx:2: const Alpha = <div />;'].join('\n'),
    );
    expect(await output({ pattern: 'alpha', glob: '**/*.md' })).toBe('docs/readme.md:1: alpha docs');
    expect(await output({ pattern: 'alpha', glob: '[ab].ts' })).toBe(
      ['src/a.ts:1: const alpha = 1;', 'src/a.ts:3: // alpha again'].join('\n'),
    );
  });

  it('refuses a glob with a directory part or unbalanced brackets', async () => {
    expect(await search({ pattern: 'alpha', glob: 'src/*.ts' })).toEqual(
      toolError(
        'glob "src/*.ts" has a "/": it filters file names only (like "*.ts"); put the directory in path',
      ),
    );
    expect(await search({ pattern: 'alpha', glob: '*.{ts' })).toEqual(
      toolError('glob "*.{ts" has a "{" without "}"'),
    );
    expect(await search({ pattern: 'alpha', glob: '[a.ts' })).toEqual(
      toolError('glob "[a.ts" has a "[" without "]"'),
    );
  });

  it('searches one directory or one file given by path', async () => {
    expect(await output({ pattern: 'alpha', path: 'docs' })).toBe('docs/readme.md:1: alpha docs');
    expect(await output({ pattern: 'alpha', path: 'src/a.ts' })).toBe(
      ['src/a.ts:1: const alpha = 1;', 'src/a.ts:3: // alpha again'].join('\n'),
    );
    expect(await output({ pattern: 'alpha', path: 'node_modules' })).toBe(
      'node_modules/dep/index.js:1: alpha',
    );
  });

  it('says when nothing matched, and how many files it searched', async () => {
    expect(await output({ pattern: 'omega' })).toBe('No matches for "omega" in . (5 files searched)');
    expect(await output({ pattern: 'omega', path: 'src/a.ts' })).toBe(
      'No matches for "omega" in src/a.ts (1 file searched)',
    );
  });

  it('skips binary and oversized files and says how many', async () => {
    await writeFile(inside('image.png'), Buffer.from('alpha\0binary'));
    await writeFile(inside('huge.log'), 'alpha\n');
    await truncate(inside('huge.log'), SEARCH_FILES_MAX_FILE_BYTES + 1);
    await writeFile(inside('sparse.bin'), '');
    await truncate(inside('sparse.bin'), 10 * 1024 ** 3);
    expect(await output({ pattern: 'alpha', path: '.', glob: '*.{png,log,bin}' })).toBe(
      [
        'No matches for "alpha" in . (3 files searched)',
        `(skipped files: 2 over ${SEARCH_FILES_MAX_FILE_BYTES} bytes, 1 binary)`,
      ].join('\n'),
    );
  });

  it('refuses a binary or oversized file named by path', async () => {
    await writeFile(inside('image.png'), Buffer.from('alpha\0binary'));
    await writeFile(inside('huge.log'), '');
    await truncate(inside('huge.log'), 10 * 1024 ** 3);
    expect(await search({ pattern: 'alpha', path: 'image.png' })).toEqual(
      toolError('image.png looks like a binary file; it was not searched'),
    );
    expect(await search({ pattern: 'alpha', path: 'huge.log' })).toEqual(
      toolError(
        `huge.log is ${10 * 1024 ** 3} bytes; search_files opens files up to ${SEARCH_FILES_MAX_FILE_BYTES} bytes`,
      ),
    );
  });

  it('stops at maxResults and says so; exactly maxResults needs no note', async () => {
    await writeFile(inside('many.txt'), 'hit\n'.repeat(10));
    expect((await output({ pattern: 'hit', maxResults: 3 })).split('\n')).toEqual([
      'many.txt:1: hit',
      'many.txt:2: hit',
      'many.txt:3: hit',
      '… stopped early: reached maxResults (3 lines); narrow path or glob, or raise maxResults (at most 1000)',
    ]);
    expect((await output({ pattern: 'hit', maxResults: 10 })).split('\n')).toHaveLength(10);
  });

  it('refuses maxResults outside 1 to 1000', async () => {
    expect(await search({ pattern: 'a', maxResults: 0 })).toMatchObject({ error: 'invalid_arguments' });
    expect(await search({ pattern: 'a', maxResults: 1001 })).toMatchObject({ error: 'invalid_arguments' });
  });

  it('cuts long lines around the match and caps the whole output', async () => {
    await writeFile(inside('long.txt'), `${'x'.repeat(5_000)}needle${'y'.repeat(5_000)}\n`.repeat(200));
    const lines = (await output({ pattern: 'needle', path: 'long.txt', maxResults: 1000 })).split('\n');
    expect(lines[0]).toBe(
      `long.txt:1: …${'x'.repeat(50)}needle${'y'.repeat(SEARCH_FILES_SHOWN_LINE_CHARS - 56)}…`,
    );
    expect(lines.join('\n').length).toBeLessThanOrEqual(SEARCH_FILES_MAX_OUTPUT_CHARS + 200);
    expect(lines.at(-1)).toBe(
      `… stopped early: the output reached ${SEARCH_FILES_MAX_OUTPUT_CHARS} characters; narrow path or glob`,
    );
  });

  it('searches only the first 10000 characters of a line', async () => {
    await writeFile(inside('minified.js'), `${'x'.repeat(20_000)}needle`);
    expect(await output({ pattern: 'needle', path: 'minified.js' })).toBe(
      'No matches for "needle" in minified.js (1 file searched)',
    );
  });

  it(
    'stops a catastrophically backtracking regex instead of hanging the worker',
    { timeout: 20_000 },
    async () => {
      // Half a minute of backtracking here (it doubles with every "a"): without the budget the
      // search would still end, late and without the note, so the test fails instead of hanging.
      await writeFile(inside('a-evil.txt'), `${'a'.repeat(31)}!\n`);
      await writeFile(inside('b-later.txt'), 'aaa\n');
      const started = performance.now();
      const result = await output({ pattern: '^(a+)+$', regex: true });
      expect(performance.now() - started).toBeLessThan(SEARCH_FILES_REGEX_BUDGET_MS * 5);
      expect(result).toBe(
        [
          'No matches for "^(a+)+$" in . (1 file searched)',
          `… stopped early: the regex ran for more than ${SEARCH_FILES_REGEX_BUDGET_MS} ms on a-evil.txt and was ` +
            'stopped; it probably backtracks catastrophically (nested quantifiers like (a+)+ or (.*)*): simplify it',
        ].join('\n'),
      );
    },
  );

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(
      Promise.resolve(
        createSearchFilesTool(escape.fixture.workspace).execute(
          { ...defaults, pattern: 'alpha' },
          context({ signal: controller.signal }),
        ),
      ),
    ).rejects.toThrow('cancelled');
  });

  it('stops a backtracking regex at once when cancelled, without waiting for its budget', async () => {
    await writeFile(inside('evil.txt'), `${'a'.repeat(40)}!\n`);
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const searching = Promise.resolve(
      createSearchFilesTool(escape.fixture.workspace).execute(
        { ...defaults, pattern: '^(a+)+$', regex: true, path: 'evil.txt' },
        context({ signal: controller.signal }),
      ),
    );
    setTimeout(() => controller.abort(reason), 100);
    const started = performance.now();
    await expect(searching).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(SEARCH_FILES_REGEX_BUDGET_MS);
    expect(await output({ pattern: 'alpha', path: 'src/a.ts' })).toBe(
      ['src/a.ts:1: const alpha = 1;', 'src/a.ts:3: // alpha again'].join('\n'),
    );
  });

  it('runs parallel searches on at most two scan threads, all of them answered', async () => {
    await writeFile(inside('evil.txt'), `${'a'.repeat(40)}!\n`);
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, scanThreads.threadCount)), 5);
    try {
      const results = await Promise.all(
        Array.from({ length: 4 }, () => output({ pattern: '^(a+)+$', regex: true, path: 'evil.txt' })),
      );
      for (const result of results) expect(result).toMatch(/stopped early: the regex ran for more than/);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('heartbeats while it searches many files', async () => {
    await mkdir(inside('many'));
    await Promise.all(
      Array.from({ length: 250 }, (_, index) => writeFile(inside('many', `f${index}.txt`), 'x')),
    );
    const heartbeat = vi.fn();
    await createSearchFilesTool(escape.fixture.workspace).execute(
      { ...defaults, pattern: 'alpha', path: 'many' },
      context({ heartbeat }),
    );
    expect(heartbeat).toHaveBeenCalledTimes(2);
    expect(heartbeat).toHaveBeenLastCalledWith({ filesSearched: 200 });
  });

  describe('stays inside the workspace', () => {
    it('refuses every spelling of a directory outside as path', async () => {
      for (const [requested, outcome] of traversals(escape.fixture)) {
        const observation = await search({ pattern: OUTSIDE_SECRET, path: requested });
        expect(observation, requested).toMatchObject({ ok: false, error: 'tool_error' });
        const message = observation.ok ? '' : observation.message;
        if ('refused' in outcome) expect(message, requested).toMatch(outcome.refused);
        else expect(message, requested).toMatch(/^No such file or directory: /);
      }
      for (const requested of ['..', '../', '../outside', './..']) {
        expect(await search({ pattern: OUTSIDE_SECRET, path: requested })).toEqual(
          toolError(`Path refused: ${JSON.stringify(requested)} leads outside the workspace`),
        );
      }
    });

    it('does not follow symbolic links, to files, directories or devices', { timeout: 10_000 }, async () => {
      await symlink(path.join(escape.fixture.outside, 'secret.txt'), inside('secret-link.txt'));
      await symlink(escape.fixture.outside, inside('escape'));
      await symlink('/dev/zero', inside('zero'));
      await symlink('src', inside('source'));
      escape.files.fifo(inside('pipe'));
      await escape.files.socket(inside('sock'));
      expect(await output({ pattern: OUTSIDE_SECRET })).toBe(
        `No matches for ${JSON.stringify(OUTSIDE_SECRET)} in . (5 files searched)`,
      );
      expect(await output({ pattern: 'alpha =' })).toBe('src/a.ts:1: const alpha = 1;');
    });

    it('refuses a link outside, a named pipe or a device given as path', { timeout: 10_000 }, async () => {
      await symlink(escape.fixture.outside, inside('escape'));
      escape.files.fifo(inside('pipe'));
      expect(await search({ pattern: 'x', path: 'escape' })).toEqual(
        toolError('Path refused: "escape" goes through a symbolic link that leads outside the workspace'),
      );
      expect(await search({ pattern: 'x', path: 'pipe' })).toEqual(
        toolError('pipe is not a regular file but a named pipe'),
      );
    });

    it('skips a directory swapped for a link to outside while it searches', async () => {
      await mkdir(inside('sub'));
      await writeFile(inside('sub', 'file.txt'), 'nothing here');
      await writeFile(path.join(escape.fixture.outside, 'file.txt'), OUTSIDE_SECRET);
      swapBeforeOpeningSubdirectory('sub', async () => {
        await rename(inside('sub'), inside('sub-before'));
        await symlink(escape.fixture.outside, inside('sub'));
      });
      const result = await output({ pattern: OUTSIDE_SECRET });
      expect(result).not.toContain(`:1: ${OUTSIDE_SECRET}`);
      expect(result).toMatch(/\(skipped files: 1 unreadable\)$/);
    });
  });
});
