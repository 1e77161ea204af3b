import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../src/cli/defer-signals.ts', import.meta.url));

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
});
