import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Terminal } from '../support/terminal.js';

const module = fileURLToPath(new URL('../../src/cli/defer-signals.ts', import.meta.url));
const ctrlCKey = fileURLToPath(new URL('../../src/cli/ctrl-c-key.ts', import.meta.url));

/**
 * Runs a Node process that signals itself inside `withSignalsDeferred` and then writes `done`
 * before the work ends; `listen` gives it a SIGINT listener of its own first. Resolves how it ended
 * and what it wrote.
 */
async function interrupted(
  listen: boolean,
  workMs = 300,
): Promise<{ signal: string | null; code: number | null; file: string }> {
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-defer-'));
  const file = path.join(directory, 'out');
  const script = [
    `import { appendFileSync } from 'node:fs';`,
    `const { withSignalsDeferred } = await import(${JSON.stringify(module)});`,
    listen ? `process.on('SIGINT', () => appendFileSync(${JSON.stringify(file)}, 'own listener;'));` : '',
    'await withSignalsDeferred(async () => {',
    `  process.kill(process.pid, 'SIGINT');`,
    workMs > 0 ? `  await new Promise((resolve) => setTimeout(resolve, ${workMs}));` : '',
    `  appendFileSync(${JSON.stringify(file)}, 'done;');`,
    '});',
    // Only reached when the signal was not held (a listener of its own handled it).
    `appendFileSync(${JSON.stringify(file)}, 'after;');`,
  ].join('\n');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    return { code, signal, file: await readFile(file, 'utf8').catch(() => '') };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

describe('withSignalsDeferred', () => {
  it('holds a Ctrl-C that nothing listens for until the work is done, then ends the process by it', async () => {
    const ended = await interrupted(false);
    expect(ended.file).toBe('done;');
    expect(ended.signal).toBe('SIGINT');
  });

  it('holds a Ctrl-C sent just as the work ends, which Node has not handed to any listener yet', async () => {
    const ended = await interrupted(false, 0);
    expect(ended.file).toBe('done;');
    expect(ended.signal).toBe('SIGINT');
  });

  it('leaves a Ctrl-C the command listens for to its own listener, at once', async () => {
    const ended = await interrupted(true);
    expect(ended.file).toBe('own listener;done;after;');
    expect(ended.code).toBe(0);
  });
  it('gives a terminal in raw mode (Ctrl-C read as a key) back its usual mode before the held Ctrl-C ends the process', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-defer-tty-'));
    const settings = path.join(directory, 'stty');
    const script = path.join(directory, 'held.mjs');
    await writeFile(
      script,
      [
        `const { withSignalsDeferred } = await import(${JSON.stringify(module)});`,
        `const { withCtrlCKey } = await import(${JSON.stringify(ctrlCKey)});`,
        'await withCtrlCKey(() =>',
        '  withSignalsDeferred(async () => {',
        '    // The work ends once Ctrl-C has been read (and held).',
        "    const key = new Promise((resolve) => process.stdin.on('data', (chunk) => chunk.includes('\\u0003') && resolve()));",
        "    console.log('holding');",
        '    await key;',
        '  }),',
        ');',
        "console.log('not reached');",
      ].join('\n'),
    );
    const terminal = await Terminal.start(
      [
        'bash',
        '-c',
        `"$1" --import tsx "$2"; echo "status $?"; stty -a > "$3"`,
        'bash',
        process.execPath,
        script,
        settings,
      ],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    );
    try {
      await terminal.waitFor('holding');
      await terminal.press('C-c');
      expect(await terminal.exited()).toBe(0);
      const screen = await terminal.scrollback();
      expect(screen).toContain('status 130');
      expect(screen).not.toContain('not reached');
      const modes = (await readFile(settings, 'utf8')).split(/\s+/u);
      expect(modes).toContain('icanon');
      expect(modes).toContain('echo');
    } finally {
      await terminal.close();
      await rm(directory, { recursive: true, force: true });
    }
  }, 60_000);
});
