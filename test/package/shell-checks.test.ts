import { describe, expect, it } from 'vitest';
import type { DocBlock } from './doc-blocks.js';
import { fencedBlocks, headingAnchors, markerBefore, shellCommands } from './doc-blocks.js';
import { keelInvocation, shellCommandProblems } from './shell-checks.js';

/** A `sh` block with this body, as if it stood on line 10 of docs/x.md. */
const block = (body: string): DocBlock => ({
  page: 'docs/x.md',
  line: 10,
  language: 'sh',
  file: undefined,
  marker: undefined,
  body,
});
const problemsOf = async (line: string) => shellCommandProblems(shellCommands(block(`${line}\n`))[0]!);

describe('documented shell commands', () => {
  it('are split as a shell would: quotes, continuations, comments, assignments, captures', () => {
    const commands = shellCommands(
      block(
        [
          `OPENAI_API_KEY=sk-... npx keel run "Summarise \\"it\\"" # a comment`,
          `keel approve a b --args '{"path":"x y"}' \\`,
          `  --note "safer path"`,
          `id=$(keel run --detach "Look")`,
          '',
        ].join('\n'),
      ),
    );
    expect(commands).toEqual([
      {
        line: 11,
        environment: { OPENAI_API_KEY: 'sk-...' },
        words: ['npx', 'keel', 'run', 'Summarise "it"'],
        captureInto: undefined,
      },
      {
        line: 12,
        environment: {},
        words: ['keel', 'approve', 'a', 'b', '--args', '{"path":"x y"}', '--note', 'safer path'],
        captureInto: undefined,
      },
      { line: 14, environment: {}, words: ['keel', 'run', '--detach', 'Look'], captureInto: 'id' },
    ]);
    expect(keelInvocation(commands[0]!.words)).toEqual({ via: 'npx keel', args: ['run', 'Summarise "it"'] });
  });

  it('refuse placeholders and operators a reader could not paste: <id>, pipes, ;', () => {
    expect(() => shellCommands(block('keel send <id> "Now fix it"\n'))).toThrow('docs/x.md:11: "<"');
    expect(() => shellCommands(block('keel list | head\n'))).toThrow('"|"');
    expect(() => shellCommands(block('npm ci; npm test\n'))).toThrow('";"');
  });

  it('fail for a program, script, file, service or flag that does not exist', async () => {
    expect(await problemsOf('curl https://example.com')).toEqual([expect.stringContaining('"curl"')]);
    expect(await problemsOf('npm run no-such-script')).toEqual([expect.stringContaining('no-such-script')]);
    expect(await problemsOf('npm run typecheck')).toEqual([]);
    expect(await problemsOf('node dist/cli.js worker')).toEqual([expect.stringContaining('dist/cli.js')]);
    expect(await problemsOf('node dist/worker.js')).toEqual([]);
    expect(await problemsOf('docker compose logs -f keell')).toEqual([expect.stringContaining('keell')]);
    expect(await problemsOf('export KEEL_MODLE=x')).toEqual([expect.stringContaining('KEEL_MODLE')]);
    expect(await problemsOf('sudo apt-get install tmux cowsay')).toEqual([expect.stringContaining('cowsay')]);
    expect(await problemsOf('npm start -- list --json')).toEqual([expect.stringContaining('--silent')]);
  });

  it('check temporal commands with the real temporal CLI and the run input with its schema', async () => {
    expect(await problemsOf('temporal workflow list --query \'KeelStatus = "failed"\'')).toEqual([]);
    expect(await problemsOf('temporal workflow strat')).toEqual([
      expect.stringContaining('no command "workflow strat"'),
    ]);
    expect(await problemsOf('temporal workflow result --workflow-id a --bogus')).toEqual([
      expect.stringContaining('unknown flag: --bogus'),
    ]);
    const start = `temporal workflow start --type agentRun --task-queue keel --workflow-id a --input`;
    expect(await problemsOf(`${start} '{"task": "x"}'`)).toEqual([]);
    expect(await problemsOf(`${start} '{"task": "x", "colour": 1}'`)).toEqual([
      expect.stringContaining('--input: (root) must NOT have additional properties'),
    ]);
    expect(await problemsOf(`${start} '{"task": '`)).toEqual([
      expect.stringContaining('--input is not JSON'),
    ]);
  });
});

describe('links', () => {
  it('reach headings by the anchors GitHub makes of them', () => {
    const anchors = headingAnchors('docs/safety.md');
    expect(anchors).toContain('run_command-a-sandbox-per-command');
    expect(anchors).toContain('http_fetch');
    expect(anchors).not.toContain('run-input');
    expect(headingAnchors('docs/contract.md')).toContain('the-state-query');
  });
});

describe('code blocks', () => {
  it('carry the HTML comment before them as their marker, across lines and a blank line', () => {
    const lines = [
      '<!-- compiled with: declare const a: string;',
      '  declare const b: number; -->',
      '',
      '```ts',
    ];
    expect(markerBefore(lines, 3)).toBe('compiled with: declare const a: string; declare const b: number;');
    expect(markerBefore(['text', '', '```ts'], 2)).toBeUndefined();
    expect(fencedBlocks('README.md').every((entry) => entry.language !== '')).toBe(true);
  });
});
