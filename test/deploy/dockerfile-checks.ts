import path from 'node:path';
import ts from 'typescript';
import { words, workerService } from './deployment.js';
import type { Deployment } from './deployment.js';
import type { Instruction, Stage } from './dockerfile.js';

/** A stage's instructions, each with the working directory in force when it runs. */
function withWorkdir(stage: Stage): { instruction: Instruction; workdir: string }[] {
  let workdir = '/';
  return stage.instructions.map((instruction) => {
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args[0] ?? '');
    return { instruction, workdir };
  });
}

/** Where a `COPY`/`ADD` puts one of its sources (a destination ending in `/` is a directory). */
function copyDestination(source: string, destination: string, workdir: string, sources: number): string {
  const target = path.posix.resolve(workdir, destination);
  return destination.endsWith('/') || sources > 1
    ? path.posix.join(target, path.posix.basename(source))
    : target;
}

/** The last copy that provides `file` in `stage`: its source, and its `--from` stage (none: the context). */
function providerOf(stage: Stage, file: string): { from: string | undefined; source: string } | undefined {
  let provider: { from: string | undefined; source: string } | undefined;
  for (const { instruction, workdir } of withWorkdir(stage)) {
    if (instruction.keyword !== 'COPY' && instruction.keyword !== 'ADD') continue;
    const sources = instruction.args.slice(0, -1);
    const destination = instruction.args.at(-1) ?? '';
    for (const source of sources) {
      const target = copyDestination(source, destination, workdir, sources.length);
      const rest = path.posix.relative(target, file);
      if (rest === '' || (!rest.startsWith('..') && !path.posix.isAbsolute(rest))) {
        provider = { from: instruction.flags.from, source: path.posix.join(source, rest) };
      }
    }
  }
  return provider;
}

/**
 * `.dockerignore` semantics for the patterns Keel uses (names, `*`, `!` exceptions): the last matching
 * line wins, and a line that matches a parent directory matches the file.
 */
export function isIgnored(file: string, patterns: readonly string[]): boolean {
  let ignored = false;
  for (const line of patterns) {
    const exception = line.startsWith('!');
    const pattern = path.posix.normalize(exception ? line.slice(1) : line).replace(/^\/|\/$/g, '');
    const expression = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replaceAll('*', '[^/]*')
        .replaceAll('?', '[^/]')}(?:/.*)?$`,
    );
    if (expression.test(file)) ignored = !exception;
  }
  return ignored;
}

/**
 * The image must run, as a non-root user, the file the worker service's command names, and that file
 * must be what `npm run build` makes from a source in the repository: command → runtime copy → build
 * stage output → `tsc` outDir → source file copied into the build stage and not excluded by
 * `.dockerignore`.
 */
export function dockerfileProblems(deployment: Deployment): string[] {
  const problems: string[] = [];
  const stages = deployment.dockerfile;
  const runtime = stages.at(-1);
  if (runtime === undefined) return ['the Dockerfile has no stage'];
  const user = runtime.instructions.filter((instruction) => instruction.keyword === 'USER').at(-1)?.args[0];
  if (user === undefined || /^(?:root|0)(?::|$)/.test(user)) problems.push('the image runs as root');

  const [workerName, worker] = workerService(deployment.compose);
  const imageCommand = runtime.instructions
    .filter((instruction) => instruction.keyword === 'CMD')
    .at(-1)?.args;
  const command = worker.command === undefined ? (imageCommand ?? []) : words(worker.command);
  if (imageCommand !== undefined && command.join(' ') !== imageCommand.join(' ')) {
    problems.push(
      `${workerName} runs "${command.join(' ')}", the image's CMD is "${imageCommand.join(' ')}"`,
    );
  }
  const [program, script] = command;
  if (program !== 'node' || script === undefined)
    return [...problems, `${workerName} does not run "node <file>"`];

  const runtimeWorkdir = withWorkdir(runtime).at(-1)?.workdir ?? '/';
  const entry = path.posix.resolve(runtimeWorkdir, script);
  const packageJson = JSON.parse(deployment.readFile('package.json') ?? '{}') as {
    type?: string;
    scripts?: Record<string, string>;
  };
  if (
    packageJson.type === 'module' &&
    !providerOf(runtime, path.posix.join(runtimeWorkdir, 'package.json'))
  ) {
    problems.push(
      `the image lacks ${runtimeWorkdir}/package.json, whose "type": "module" makes Node load ${script} as ESM`,
    );
  }
  const copied = providerOf(runtime, entry);
  const build = stages.find((stage) => stage.name !== undefined && stage.name === copied?.from);
  if (copied === undefined || build === undefined) {
    return [...problems, `the image does not copy ${entry} from a build stage`];
  }
  const buildRun = withWorkdir(build).find(({ instruction }) =>
    /(?:^|&&|;)\s*npm run build\b/.test(instruction.keyword === 'RUN' ? instruction.args.join(' ') : ''),
  );
  if (buildRun === undefined) return [...problems, `stage ${build.name} never runs "npm run build"`];

  const tsc = /^tsc(?:\s+(?:-p|--project)\s+(\S+))?$/.exec(packageJson.scripts?.build ?? '');
  if (!tsc) return [...problems, `package.json's build script is not "tsc [-p config]"`];
  const configFile = tsc[1] ?? 'tsconfig.json';
  // tsconfig.json may hold comments, so TypeScript reads it; Keel's sets outDir and rootDir (no `extends`).
  const { config } = ts.readConfigFile(configFile, (file) => deployment.readFile(file)) as {
    config?: { compilerOptions?: { outDir?: string; rootDir?: string } };
  };
  const outDir = path.posix.normalize(config?.compilerOptions?.outDir ?? '.');
  const rootDir = path.posix.normalize(config?.compilerOptions?.rootDir ?? '.');
  const output = path.posix.relative(buildRun.workdir, copied.source);
  if (!output.startsWith(`${outDir}/`) || !output.endsWith('.js')) {
    return [...problems, `${copied.source} is not a .js file under ${configFile}'s outDir ${outDir}`];
  }
  const source = path.posix.join(rootDir, path.posix.relative(outDir, output)).replace(/\.js$/, '.ts');
  if (deployment.readFile(source) === undefined)
    problems.push(`${source}, which would build ${output}, does not exist`);

  for (const needed of [source, configFile, 'package.json', 'package-lock.json']) {
    const provider = providerOf(build, path.posix.join(buildRun.workdir, needed));
    if (provider === undefined || provider.from !== undefined) {
      problems.push(`stage ${build.name} does not copy ${needed} from the build context`);
    } else if (isIgnored(path.posix.normalize(provider.source), deployment.dockerignore)) {
      problems.push(`.dockerignore keeps ${provider.source} out of the build context`);
    }
  }
  return problems;
}

/** The build context must leave out what the host has built or holds: node_modules, dist, .env files. */
export function dockerignoreProblems(deployment: Deployment): string[] {
  return ['node_modules', 'dist', '.env', '.git']
    .filter((file) => !isIgnored(file, deployment.dockerignore))
    .map((file) => `.dockerignore lets ${file} into the build context`);
}

/** The runtime image must leave out development dependencies: the build prunes them or installs without. */
export function devDependencyProblems(deployment: Deployment): string[] {
  const runs = deployment.dockerfile.flatMap((stage) =>
    stage.instructions
      .filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => instruction.args.join(' ')),
  );
  return runs.some((run) => /npm (?:prune|ci|install)\b[^&;]*--omit[= ]dev/.test(run))
    ? []
    : ['no RUN drops the development dependencies (npm prune --omit=dev)'];
}
