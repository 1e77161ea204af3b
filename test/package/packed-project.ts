import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { distProblem } from '../../bench/support/built-keel.js';

const execFileAsync = promisify(execFile);

/** The repository root. */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The example program docs/library.md shows and the packed-package test compiles and runs. */
export const exampleDirectory = path.join(repositoryRoot, 'examples', 'library');

/** A program that uses every entry point, compiled and run beside the example. */
const entryPointsProgram = fileURLToPath(new URL('./entry-points.ts', import.meta.url));

/** A file `npm pack` put in the tarball. */
export interface PackedFile {
  path: string;
  size: number;
}

/** What `npm pack` made. */
export interface Packed {
  tarball: string;
  files: PackedFile[];
}

/** The shape of `npm pack --json`'s output that this test reads. */
interface PackJson {
  filename: string;
  files: PackedFile[];
}

/**
 * The environment of the commands the test runs: this one's (proxies, CA certificates, npm's cache
 * in HOME), without the npm_config_* that `npm test` sets (its local_prefix would make an install in
 * the user's project land in the repository) or any setting that could point the example at another
 * server or model, plus `extra`.
 */
export function childEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && !/^(?:npm_|OPENAI_|TEMPORAL_|KEEL_)/i.test(entry[0]),
  );
  return { ...Object.fromEntries(inherited), ...extra };
}

/** Seconds each step took, printed by the test (CI runs it on two cores). */
export type Timings = Record<string, number>;

/** Runs a command to completion and returns its stdout; its output is in the error when it fails. */
export async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, {
      cwd: options.cwd,
      env: childEnvironment(options.env),
      maxBuffer: 64 * 1024 * 1024,
      // Killed once this long has passed (0: never).
      timeout: options.timeoutMs ?? 0,
      killSignal: 'SIGKILL',
    });
    return stdout;
  } catch (error) {
    const failure = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed in ${options.cwd}: ${failure.message}\n${failure.stdout ?? ''}\n${failure.stderr ?? ''}`,
      { cause: error },
    );
  }
}

/** Measures one step. */
export async function timed<T>(timings: Timings, step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    timings[step] = Math.round(performance.now() - started) / 1000;
  }
}

/**
 * Packs the package into `directory` (lifecycle scripts off), building it first only when `dist/` is
 * not the build of the current source: the tests' global set-up has just made it current.
 */
export async function buildAndPack(directory: string, timings: Timings): Promise<Packed> {
  if ((await distProblem()) !== undefined)
    await timed(timings, 'build', () => run('npm', ['run', 'build'], { cwd: repositoryRoot }));
  const output = await timed(timings, 'pack', () =>
    run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', directory], {
      cwd: repositoryRoot,
    }),
  );
  const [packed] = JSON.parse(output) as PackJson[];
  if (packed === undefined) throw new Error(`npm pack reported nothing: ${output}`);
  return { tarball: path.join(directory, packed.filename), files: packed.files };
}

/**
 * A fresh project in `directory` (outside the repository) holding the example program, with the tarball installed
 * in place of the `keel` version its package.json names, and compiled with its own `tsc`; beside it
 * `entry-points.ts`, which uses every entry point.
 */
export async function installExample(tarball: string, directory: string, timings: Timings): Promise<string> {
  const project = path.join(directory, 'project');
  await mkdir(project);
  await cp(exampleDirectory, project, {
    recursive: true,
    filter: (source) => !/[/\\](?:node_modules|dist)$/.test(source),
  });
  const manifest = JSON.parse(await readFile(path.join(project, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  await cp(entryPointsProgram, path.join(project, 'entry-points.ts'));
  manifest.dependencies.keel = `file:${tarball}`;
  await writeFile(path.join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // The registry is reachable, but everything the repository installed is in npm's cache already.
  // Without a lockfile npm still asks the registry about what its cache lacks, and a request can
  // stall: a clean CI's install outlived the hook's 300 s and was still hanging 30 min later. So a
  // stalled request is dropped after 30 s and tried again, and an install that takes over 120 s
  // (about 35 s here) is killed and run once more.
  const install = (): Promise<string> =>
    run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--include=dev',
        '--fetch-timeout=30000',
        '--fetch-retries=4',
        '--fetch-retry-mintimeout=2000',
        '--fetch-retry-maxtimeout=10000',
      ],
      { cwd: project, timeoutMs: 120_000 },
    );
  await timed(timings, 'install', () => install().catch(install));
  await timed(timings, 'compile', () => run('npx', ['--no-install', 'tsc', '-p', '.'], { cwd: project }));
  return project;
}
