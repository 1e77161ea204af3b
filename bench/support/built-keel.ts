import { spawn } from 'node:child_process';
import { cp, mkdir, readdir, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** The benchmark's tools module, as a user writes one (imports `keel` by name). */
const toolsModuleSource = path.join(root, 'bench', 'tools-module', 'noop-tools.js');

/** The built package the benchmarks run: a private copy of `dist/` and `package.json`. */
export interface BuiltKeel {
  /** The copy's root (its `node_modules` links to the repository's). */
  root: string;
  /** `dist/worker.js` of the copy: what the Docker image runs (`node dist/worker.js`). */
  workerEntry: string;
  /** The no-op tools module inside the copy, for `KEEL_TOOLS_MODULE`. */
  toolsModule: string;
}

/** The newest modification time (ms) of any file under `directory`. */
async function newestFile(directory: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/** Why `dist/` is not the build of the current source, or undefined when it is. */
export async function distProblem(): Promise<string | undefined> {
  // `npm run build` writes the workflow bundle last (postbuild): it dates the whole build.
  const bundle = await stat(path.join(root, 'dist', 'workflow-bundle.js')).catch(() => undefined);
  if (bundle === undefined) return 'dist/ is missing';
  const sources = Math.max(
    await newestFile(path.join(root, 'src')),
    ...(await Promise.all(
      ['package.json', 'tsconfig.json'].map(async (file) => (await stat(path.join(root, file))).mtimeMs),
    )),
  );
  return sources > bundle.mtimeMs ? 'dist/ is older than src/' : undefined;
}

/**
 * What the copy's own `prebuiltBundleProblem` says ('' when its workflow bundle is current), asked
 * in a plain Node process, as the built worker asks it at start.
 */
async function copiedBundleProblem(copy: string): Promise<string> {
  const script =
    "const { prebuiltBundleProblem } = await import('./dist/prebuilt-bundle.js');" +
    "process.stdout.write((await prebuiltBundleProblem()) ?? '');";
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], {
    cwd: copy,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return code === 0 ? output : `checking it failed (exit ${code})`;
}

/** Runs `npm run build` in the repository, its output on stderr. */
async function build(): Promise<void> {
  const child = spawn('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`npm run build exited with ${code}`);
}

/**
 * Makes sure `dist/` is the build of the current source (`npm run build` when it is missing or
 * stale, said in one line), then copies it into `directory`, so that a rebuild during the benchmark
 * (the package test runs one) cannot change the code under measurement. The copy must hold a
 * current prebuilt workflow bundle, as a built worker checks at start.
 */
export async function prepareBuiltKeel(directory: string, say: (line: string) => void): Promise<BuiltKeel> {
  const problem = await distProblem();
  if (problem === undefined) say('Using the built worker in dist/ (current with src/).');
  else {
    say(`Building dist/ (${problem}): npm run build…`);
    await build();
  }
  const copy = path.join(directory, 'built-keel');
  await mkdir(copy, { recursive: true });
  await cp(path.join(root, 'package.json'), path.join(copy, 'package.json'));
  await cp(path.join(root, 'dist'), path.join(copy, 'dist'), {
    recursive: true,
    filter: (source) => !source.endsWith('.map') && !source.endsWith('.d.ts'),
  });
  await symlink(path.join(root, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  const toolsModule = path.join(copy, 'bench', 'noop-tools.js');
  await mkdir(path.dirname(toolsModule), { recursive: true });
  await cp(toolsModuleSource, toolsModule);
  const bundleProblem = await copiedBundleProblem(copy);
  if (bundleProblem !== '') throw new Error(`the copy of dist/ is not a whole build: ${bundleProblem}`);
  return { root: copy, workerEntry: path.join(copy, 'dist', 'worker.js'), toolsModule };
}
