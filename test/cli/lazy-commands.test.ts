import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `main` of src/cli/main.ts (through tsx, as `npx keel` in a checkout) once per command in
 * PROBE_COMMANDS, in this one process, and writes to fd 3 each exit code and the Temporal packages
 * loaded so far. They are CommonJS: however they were reached, they are in require's cache.
 */
const PROBE = `
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
const { main } = await import(process.env.PROBE_MAIN);
const cache = createRequire(import.meta.url).cache;
const steps = [];
for (const args of JSON.parse(process.env.PROBE_COMMANDS)) {
  const code = await main(args);
  const names = Object.keys(cache).map((file) => /node_modules\\/(@temporalio\\/[^/]+)\\//.exec(file)?.[1]);
  steps.push({ args, code, packages: [...new Set(names.filter(Boolean))].sort() });
}
writeSync(3, JSON.stringify(steps));
process.exit(0);
`;

interface Step {
  args: string[];
  code: number;
  packages: string[];
}

/** What a probe reported, and what the commands wrote to stderr. */
interface Probe {
  steps: Step[];
  stderr: string;
}

let home: string;
beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'keel-lazy-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** `keel <args>` for each of `commands` in turn in one fresh process: what each exited with and had loaded by then. */
function probe(commands: string[][], environment: Record<string, string> = {}): Promise<Probe> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', PROBE], {
    cwd: root,
    // Nothing from this environment (no Temporal config profile either: HOME is empty).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      KEEL_DATA_DIR: path.join(home, '.keel'),
      ...environment,
      PROBE_MAIN: new URL('../../src/cli/main.ts', import.meta.url).href,
      PROBE_COMMANDS: JSON.stringify(commands),
    },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let report = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  (child.stdio[3] as Readable).setEncoding('utf8').on('data', (chunk: string) => (report += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0 && report !== '') resolve({ steps: JSON.parse(report) as Step[], stderr });
      else reject(new Error(`The probe exited with ${code}:\n${stderr}`));
    });
  });
}

describe('keel loads only what its command needs', () => {
  it('help, an unknown command and usage errors load no Temporal package', async () => {
    const { steps } = await probe([
      ['--help'],
      ['run', '--help'],
      ['worker', '--help'],
      ['bogus'],
      ['status'],
      ['run', '--max-turns', '0', 'Hello'],
      ['worker', 'extra'],
    ]);
    expect(steps.map(({ args, code }) => [args.join(' '), code])).toEqual([
      ['--help', 0],
      ['run --help', 0],
      ['worker --help', 0],
      ['bogus', 2],
      ['status', 2],
      ['run --max-turns 0 Hello', 2],
      ['worker extra', 2],
    ]);
    expect(steps.filter((step) => step.packages.length > 0)).toEqual([]);
  });

  it('the commands on runs load the Temporal client, never the worker or the dev server', async () => {
    // A cluster is configured, and a key without its id fails each command at once, before it
    // connects but once its modules are loaded (one command per module: inspect, message, stream, export).
    const { steps, stderr } = await probe(
      [
        ['status', 'x'],
        ['end', 'x'],
        ['follow', 'x', '--stream'],
        ['export', 'x'],
      ],
      { TEMPORAL_ADDRESS: '127.0.0.1:1', KEEL_CODEC_KEY: 'not-a-key' },
    );
    expect(steps.map(({ code }) => code)).toEqual([1, 1, 1, 1]);
    expect(stderr.match(/KEEL_CODEC_KEY needs KEEL_CODEC_KEY_ID/gu)).toHaveLength(4);
    // The client loaded proves the probe sees what a command loads; the worker (native bridge) and
    // @temporalio/testing (the SDK's dev server) are for the commands that host a worker or start a server.
    const loaded = steps.at(-1)!.packages;
    expect(loaded).toContain('@temporalio/client');
    expect(loaded).not.toContain('@temporalio/worker');
    expect(loaded).not.toContain('@temporalio/testing');
  });
});
