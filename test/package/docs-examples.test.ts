import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cliEnvironment, runCli } from '../support/cli.js';
import type { PublishedSchemaFile } from '../support/published-schemas.js';
import { schemaErrors } from '../support/published-schemas.js';
import { compileBlocks } from './compile-blocks.js';
import type { DocBlock } from './doc-blocks.js';
import {
  documentationPages,
  fencedBlocks,
  headingAnchors,
  relativeLinks,
  shellCommands,
  where,
} from './doc-blocks.js';
import { repositoryRoot } from './packed-project.js';
import { builtOrPresent, keelInvocation, shellCommandProblems } from './shell-checks.js';

const run = promisify(execFile);

/** Whether `program` is on PATH; the parsers of other languages are optional on a CI machine. */
function onPath(program: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((directory) => existsSync(path.join(directory, program)));
}

/** Every fenced block of every page. */
const blocks: DocBlock[] = documentationPages().flatMap((page) => fencedBlocks(page));
const ofLanguage = (language: string) => blocks.filter((block) => block.language === language);

/**
 * The languages a block may have, and what checks it. A block of any other language, or of none,
 * fails the test with its page and line.
 */
const LANGUAGES: Record<string, string> = {
  ts: 'an example file byte for byte, or compiled with tsconfig.check.json',
  sh: 'every command checked (shell-checks.ts); keel commands run by docs-commands.test.ts',
  json: 'parsed; validated against docs/schemas where <!-- example: <schema> --> says so',
  python: 'parsed by python3 where it is installed (the Temporal Python SDK is not)',
  go: 'parsed by gofmt where Go is installed (the Temporal Go SDK is not fetched)',
  text: 'diagrams and output: not code',
};

describe('the documentation pages', () => {
  it('include README.md, CONTRIBUTING.md and docs/*.md; the README stays under 15 KB', async () => {
    expect(documentationPages()).toEqual(
      expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/contract.md']),
    );
    expect((await stat(path.join(repositoryRoot, 'README.md'))).size).toBeLessThan(15 * 1024);
  });

  it('give every code block a language the tests check', () => {
    const unchecked = blocks
      .filter((block) => !(block.language in LANGUAGES))
      .map(
        (block) =>
          `${where(block.page, block.line)}: \`\`\`${block.language} (known: ${Object.keys(LANGUAGES).join(', ')})`,
      );
    expect(unchecked).toEqual([]);
  });

  it('link only to files that exist in the repository, and to headings those pages have', () => {
    const broken = documentationPages().flatMap((page) =>
      relativeLinks(page).flatMap(({ line, target, anchor }) => {
        const file =
          target === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), target));
        if (!builtOrPresent(file)) return [`${where(page, line)}: ${target}`];
        if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(file).has(anchor))
          return [`${where(page, line)}: ${target}#${anchor} (no such heading)`];
        return [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('name only dist/ files that the build makes from src/', async () => {
    const named = [];
    for (const page of documentationPages()) {
      const text = await readFile(path.join(repositoryRoot, page), 'utf8');
      for (const [file] of text.matchAll(/\bdist\/[\w/.-]+\.js\b/g))
        if (!builtOrPresent(file)) named.push(`${page}: ${file}`);
    }
    expect(named).toEqual([]);
  });

  it('write `npm start --silent` wherever npm start is given --json (npm prints a banner on stdout)', async () => {
    const banners = [];
    for (const page of documentationPages()) {
      const text = await readFile(path.join(repositoryRoot, page), 'utf8');
      for (const [span] of text.matchAll(/npm start\b[^`\n]*/g))
        if (/--json|<command>/.test(span) && !/--silent|\s-s\b/.test(span)) banners.push(`${page}: ${span}`);
    }
    expect(banners).toEqual([]);
  });

  it('say the Docker image runs what the Dockerfile runs', async () => {
    const dockerfile = await readFile(path.join(repositoryRoot, 'Dockerfile'), 'utf8');
    const command = (JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[]).join(' ');
    const claims = [];
    for (const page of documentationPages()) {
      const text = (await readFile(path.join(repositoryRoot, page), 'utf8')).replace(/\s+/g, ' ');
      // "the Docker image runs …", "as the Docker image does": the `node …` command named in the same sentence.
      for (const sentence of text.split(/\.\s/).filter((part) => part.includes('Docker image')))
        for (const [, named] of sentence.matchAll(/`(node [^`]+)`/g)) claims.push({ page, named });
    }
    expect(claims.length).toBeGreaterThan(0);
    for (const { page, named } of claims) expect(named, page).toBe(command);
  });
});

describe('the README', () => {
  /** The first-column code spans of the README table whose header starts with `| <header>`. */
  async function firstColumn(header: string): Promise<string[]> {
    const readme = await readFile(path.join(repositoryRoot, 'README.md'), 'utf8');
    const table = readme.split('\n\n').find((part) => part.startsWith(`| ${header}`)) ?? '';
    return table
      .split('\n')
      .slice(2)
      .flatMap((row) =>
        [...(row.split(/(?<!\\)\|/)[1] ?? '').matchAll(/`([^`]+)`/g)].map(([, code]) => code!),
      );
  }

  it('lists every command the CLI has, one row each', async () => {
    const help = await runCli(['--help'], { env: cliEnvironment() });
    const commands = help.stdout
      .split('Commands:\n')[1]!
      .split('\n\n')[0]!
      .split('\n')
      .map((line) => line.trim().split(/\s/)[0]!);
    const rows = (await firstColumn('command')).map((cell) => cell.split(' ')[1]!);
    expect(commands.length).toBeGreaterThan(5);
    expect(rows.sort()).toEqual(expect.arrayContaining(commands.sort()));
  });

  it("maps every folder of the repository and of src/ in 'Where things are'", async () => {
    const mapped = (await firstColumn('path')).map((cell) => cell.replace(/\/$/, ''));
    const top = (await readdir(repositoryRoot, { withFileTypes: true }))
      // Not what the build, the tests or a tool leave behind: hidden folders (but .ci), dependencies, output.
      .filter((entry) => entry.isDirectory() && !['node_modules', 'dist', 'coverage'].includes(entry.name))
      .filter((entry) => !entry.name.startsWith('.') || entry.name === '.ci')
      .map((entry) => (entry.name === '.ci' ? '.ci/run' : entry.name));
    const source = (await readdir(path.join(repositoryRoot, 'src'), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}`);
    expect([...top, ...source].filter((folder) => !mapped.some((cell) => cell.startsWith(folder)))).toEqual(
      [],
    );
  });

  it('shows only settings that docs/configuration.md documents', async () => {
    const page = await readFile(path.join(repositoryRoot, 'docs/configuration.md'), 'utf8');
    const variables = await firstColumn('variable');
    expect(variables.length).toBeGreaterThan(5);
    expect(variables.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('the examples in docs/', () => {
  it('are the example files, which the typecheck and the linter cover, byte for byte', async () => {
    const named = blocks.filter((block) => block.file !== undefined);
    expect(named.map((block) => block.file)).toEqual(
      expect.arrayContaining([
        'examples/tools/lookup-order.ts',
        'examples/tools/my-tools.ts',
        'examples/tools/refund.ts',
      ]),
    );
    for (const { page, line, file, body } of named) {
      expect(body, `${where(page, line)} shows ${file}`).toBe(
        await readFile(path.join(repositoryRoot, file!), 'utf8'),
      );
    }
  });

  it('show every example file under examples/tools', async () => {
    const shown = new Set(blocks.map((block) => block.file));
    const files = await readdir(path.join(repositoryRoot, 'examples', 'tools'));
    expect(files.map((file) => `examples/tools/${file}`).filter((file) => !shown.has(file))).toEqual([]);
  });
});

describe('the code blocks', () => {
  it('in TypeScript compile with the strict settings of the repository', () => {
    const fragments = ofLanguage('ts').filter((block) => block.file === undefined);
    expect(fragments.length).toBeGreaterThan(0);
    expect(compileBlocks(fragments)).toEqual([]);
  }, 120_000);

  it('in JSON parse, and validate against the published schema they name', () => {
    const problems = ofLanguage('json').flatMap((block) => {
      let value: unknown;
      try {
        value = JSON.parse(block.body);
      } catch (error) {
        return [`${where(block.page, block.line)}: ${(error as Error).message}`];
      }
      const schema = /^example: ([\w.-]+)$/.exec(block.marker ?? '')?.[1] as PublishedSchemaFile | undefined;
      return schema === undefined
        ? []
        : schemaErrors(schema, value).map((error) => `${where(block.page, block.line)}: ${schema} ${error}`);
    });
    expect(problems).toEqual([]);
  });

  it.skipIf(!onPath('python3'))('in Python parse (skipped without python3)', async () => {
    for (const block of ofLanguage('python')) {
      const parsed = run('python3', ['-c', 'import ast, sys; ast.parse(sys.argv[1])', block.body]);
      await expect(parsed, where(block.page, block.line)).resolves.toBeDefined();
    }
  });

  it.skipIf(!onPath('gofmt'))('in Go parse (skipped without gofmt)', async () => {
    for (const block of ofLanguage('go')) {
      const child = execFile('gofmt', ['-e']);
      const formatted = new Promise<number | null>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', resolve);
      });
      child.stdin!.end(block.body);
      await expect(formatted, `${where(block.page, block.line)} (gofmt -e)`).resolves.toBe(0);
    }
  });

  it('in shell run only programs the tests know, with arguments they accept', async () => {
    const problems: string[] = [];
    let keelCommands = 0;
    for (const block of ofLanguage('sh')) {
      for (const command of shellCommands(block)) {
        const at = where(block.page, command.line);
        const keel = keelInvocation(command.words);
        if (keel !== undefined) keelCommands++;
        // keel commands themselves run in docs-commands.test.ts; npm's and node's part is checked here.
        if (keel !== undefined && !['npm', 'node'].includes(command.words[0]!)) continue;
        for (const problem of await shellCommandProblems(command)) problems.push(`${at}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
    expect(keelCommands).toBeGreaterThan(5);
  }, 120_000);

  it("include the README's test commands, which are what .ci/run runs last", async () => {
    const readme = fencedBlocks('README.md').filter((block) => block.language === 'sh');
    const ci = (await readFile(path.join(repositoryRoot, '.ci/run'), 'utf8')).trim().split('\n');
    const testBlock = readme.find((block) => block.body.startsWith('npm test\n'));
    const commands = testBlock?.body.trim().split('\n') ?? [];
    expect(commands).toContain('npm test');
    expect(ci.slice(-commands.length)).toEqual(commands);
  });
});
