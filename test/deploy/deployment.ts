import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { parseDockerfile } from './dockerfile.js';
import type { Stage } from './dockerfile.js';

/** The parts of a Compose service the checks read (the schema check covers the rest). */
export interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  entrypoint?: string | string[];
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: (string | { type?: string; source?: string; target: string; read_only?: boolean })[];
  depends_on?: string[] | Record<string, { condition: string }>;
  stop_grace_period?: string;
}

/** A parsed `docker-compose.yml`. */
export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** The deployment files of a checkout, parsed. Checks take this, so tests can hand them an edited copy. */
export interface Deployment {
  /** The raw YAML value, for the schema check. */
  composeDocument: unknown;
  compose: ComposeFile;
  /** `.env`: the values Compose substitutes for `${NAME}`. */
  dotenv: Map<string, string>;
  dockerfile: Stage[];
  /** `.dockerignore` patterns, in order, comments dropped. */
  dockerignore: string[];
  /** A repository file's text by its path from the root; undefined when there is none. */
  readFile(relativePath: string): string | undefined;
}

/** The repository this test runs in. */
export const repositoryRoot = path.resolve(import.meta.dirname, '..', '..');

/** Reads and parses the deployment files under `root`. */
export function loadDeployment(root: string = repositoryRoot): Deployment {
  const readFile = (relativePath: string) => {
    const file = path.join(root, relativePath);
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  };
  const required = (relativePath: string) => {
    const text = readFile(relativePath);
    if (text === undefined) throw new Error(`${relativePath} is missing`);
    return text;
  };
  const composeDocument: unknown = parse(required('docker-compose.yml'));
  return {
    composeDocument,
    compose: composeDocument as ComposeFile,
    dotenv: parseDotenv(required('.env')),
    dockerfile: parseDockerfile(required('Dockerfile')),
    dockerignore: meaningfulLines(required('.dockerignore')),
    readFile,
  };
}

/** A copy of `deployment` whose Compose file and files are edited by `edit`; the original is untouched. */
export function editedDeployment(
  deployment: Deployment,
  edit: (compose: ComposeFile) => void,
  files: Record<string, string | undefined> = {},
): Deployment {
  const composeDocument = structuredClone(deployment.composeDocument);
  edit(composeDocument as ComposeFile);
  return {
    ...deployment,
    composeDocument,
    compose: composeDocument as ComposeFile,
    readFile: (relativePath) =>
      relativePath in files ? files[relativePath] : deployment.readFile(relativePath),
  };
}

function meaningfulLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** `NAME=value` lines; quotes and `export` are not used in Keel's `.env`, so they are not supported. */
function parseDotenv(text: string): Map<string, string> {
  return new Map(
    meaningfulLines(text).map((line) => {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
      if (!match) throw new Error(`.env: cannot read ${JSON.stringify(line)}`);
      return [match[1]!, match[2]!.trim()];
    }),
  );
}

/** A service's `environment`, as a map whichever of the two Compose forms it uses. */
export function environmentOf(service: ComposeService): Map<string, string | undefined> {
  const environment = service.environment ?? {};
  if (Array.isArray(environment)) {
    return new Map(
      environment.map((entry) => {
        const [name = '', ...value] = entry.split('=');
        return [name, value.length === 0 ? undefined : value.join('=')];
      }),
    );
  }
  return new Map(
    Object.entries(environment).map(([name, value]) => [name, value === null ? undefined : String(value)]),
  );
}

/** Splits on `:` outside `${…}`, so `${HOST_DIR:-./dir}:/dir:ro` is three parts. */
function splitOutsideSubstitutions(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index]!;
    if (character === '$' && text[index + 1] === '{') depth += 1;
    if (character === '}' && depth > 0) depth -= 1;
    if (character === ':' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  return [...parts, current];
}

/** A service's mounts in one shape: `source` is a host path or volume name; none for an anonymous volume. */
export function mountsOf(service: ComposeService): { source: string | undefined; target: string }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume !== 'string') return { source: volume.source, target: volume.target };
    const [first = '', second] = splitOutsideSubstitutions(volume);
    return second === undefined ? { source: undefined, target: first } : { source: first, target: second };
  });
}

/** The repository path a container path is bind-mounted from; undefined when no repository file is. */
export function repositoryPathOf(service: ComposeService, containerPath: string): string | undefined {
  for (const { source, target } of mountsOf(service)) {
    if (source === undefined || !/^\.\.?(?:\/|$)/.test(source)) continue;
    const relative = path.posix.relative(target, containerPath);
    if (relative === '' || (!relative.startsWith('..') && !path.posix.isAbsolute(relative))) {
      return path.posix.normalize(path.posix.join(source, relative));
    }
  }
  return undefined;
}

/** A `command` or `entrypoint` as a list of words. */
export function words(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : value.split(/\s+/).filter((word) => word !== '');
}

/** The repository scripts a service runs: every word of its entrypoint and command that is a mounted file. */
export function scriptsRunBy(
  deployment: Deployment,
  service: ComposeService,
): { path: string; text: string | undefined }[] {
  return [...words(service.entrypoint), ...words(service.command)].flatMap((word) => {
    const repositoryPath = word.startsWith('/') ? repositoryPathOf(service, word) : undefined;
    return repositoryPath === undefined
      ? []
      : [{ path: repositoryPath, text: deployment.readFile(repositoryPath) }];
  });
}

/** The one service built from this repository (the Keel worker), with its name. */
export function workerService(compose: ComposeFile): [string, ComposeService] {
  const built = Object.entries(compose.services).filter(([, service]) => {
    const context = typeof service.build === 'string' ? service.build : service.build?.context;
    return context === '.' || context === './';
  });
  if (built.length !== 1)
    throw new Error(`expected one service built from the repository, found ${built.length}`);
  return built[0]!;
}
