import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import {
  environmentOf,
  mountsOf,
  repositoryPathOf,
  repositoryRoot,
  scriptsRunBy,
  workerService,
} from './deployment.js';
import type { ComposeService, Deployment } from './deployment.js';

/*
 * Each check returns the problems it finds, one sentence each; an empty list means the files agree.
 */

let validateCompose: ValidateFunction | undefined;

/**
 * The Compose Specification's JSON schema (compose-spec/compose-spec `schema/compose-spec.json`), as
 * the `dclint` package ships it: its `update-compose-schema` script downloads that file from the spec
 * repository unchanged, so the schema's version follows the locked dclint version.
 */
function composeValidator(): ValidateFunction {
  if (validateCompose) return validateCompose;
  const dclint = path.dirname(
    createRequire(path.join(repositoryRoot, 'package.json')).resolve('dclint/package.json'),
  );
  const schema = JSON.parse(readFileSync(path.join(dclint, 'schemas', 'compose.schema.json'), 'utf8')) as {
    $schema: string;
  };
  // The schema uses union types (`"type": ["string", "number"]`) and omits `"type": "object"` beside
  // `additionalProperties` in places; both are valid draft-07, which Ajv's strict mode would refuse.
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
  // It names draft-07 as `https://json-schema.org/draft-07/schema`; Ajv knows it by its `http://…#` id.
  const draft07 = ajv.getSchema('http://json-schema.org/draft-07/schema')?.schema;
  if (typeof draft07 !== 'object') throw new Error('Ajv does not ship the draft-07 meta-schema');
  ajv.addMetaSchema({ ...draft07, $id: schema.$schema });
  validateCompose = ajv.compile(schema);
  return validateCompose;
}

/** Where the Compose file breaks the Compose Specification schema. */
export function schemaProblems(deployment: Deployment): string[] {
  const validate = composeValidator();
  if (validate(deployment.composeDocument)) return [];
  return (validate.errors ?? []).map(
    (error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`,
  );
}

/** The worker must poll the task queue clients start runs on unless told otherwise. */
export function taskQueueProblems(deployment: Deployment, defaultTaskQueue: string): string[] {
  const [name, worker] = workerService(deployment.compose);
  const taskQueue = environmentOf(worker).get('KEEL_TASK_QUEUE');
  return taskQueue === defaultTaskQueue
    ? []
    : [`${name} sets KEEL_TASK_QUEUE=${taskQueue}, but clients default to ${defaultTaskQueue}`];
}

/** Every variable the worker's environment sets must be one the code reads: anything else is a typo. */
export function environmentProblems(deployment: Deployment, namesReadByCode: ReadonlySet<string>): string[] {
  const [name, worker] = workerService(deployment.compose);
  return [...environmentOf(worker).keys()]
    .filter((variable) => !namesReadByCode.has(variable))
    .map((variable) => `${name} sets ${variable}, which the code never reads`);
}

/** A search attribute as a registration command or the SDK names it. */
export interface SearchAttribute {
  name: string;
  type: string;
}

/** `KEYWORD_LIST` (SDK), `KeywordList` (CLI) and `keywordlist` are one type. */
function sameType(left: string, right: string): boolean {
  const normal = (type: string) => type.replaceAll('_', '').toLowerCase();
  return normal(left) === normal(right);
}

/** The `--name X --type Y` pairs of every `temporal operator search-attribute create` in a script. */
export function searchAttributesCreatedBy(script: string): SearchAttribute[] {
  const unquote = (word: string) => word.replace(/^(['"])(.*)\1$/, '$2');
  return script
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => /\bsearch-attribute\s+create\b/.test(line))
    .flatMap((line) => {
      const names = [...line.matchAll(/--name[\s=]+(\S+)/g)].map((match) => unquote(match[1]!));
      const types = [...line.matchAll(/--type[\s=]+(\S+)/g)].map((match) => unquote(match[1]!));
      return names.map((name, index) => ({ name, type: types[index] ?? '(none)' }));
    });
}

/**
 * The setup must register exactly Keel's search attributes, with their types, in a one-shot service
 * the worker waits for: a run that upserts an unregistered attribute fails its workflow task.
 */
export function searchAttributeProblems(
  deployment: Deployment,
  expected: readonly SearchAttribute[],
): string[] {
  const registrars = Object.entries(deployment.compose.services).flatMap(([name, service]) =>
    scriptsRunBy(deployment, service)
      .filter((script) => script.text !== undefined && /search-attribute\s+create/.test(script.text))
      .map((script) => ({ name, registered: searchAttributesCreatedBy(script.text!) })),
  );
  if (registrars.length !== 1) {
    return [`expected one service to register search attributes, found ${registrars.length}`];
  }
  const [{ name, registered }] = registrars as [(typeof registrars)[number]];
  const problems: string[] = [];
  for (const attribute of expected) {
    const found = registered.find((candidate) => candidate.name === attribute.name);
    if (!found) problems.push(`${name} does not register ${attribute.name}`);
    else if (!sameType(found.type, attribute.type)) {
      problems.push(`${name} registers ${attribute.name} as ${found.type}, the code uses ${attribute.type}`);
    }
  }
  for (const attribute of registered) {
    if (!expected.some((candidate) => candidate.name === attribute.name)) {
      problems.push(`${name} registers ${attribute.name}, which the code does not use`);
    }
  }
  const [workerName, worker] = workerService(deployment.compose);
  if (dependencyCondition(worker, name) !== 'service_completed_successfully') {
    problems.push(`${workerName} does not wait for ${name} to complete successfully`);
  }
  return problems;
}

function dependencyCondition(service: ComposeService, dependency: string): string | undefined {
  const dependsOn = service.depends_on;
  if (Array.isArray(dependsOn)) return dependsOn.includes(dependency) ? 'service_started' : undefined;
  return dependsOn?.[dependency]?.condition;
}

/** `temporalio/auto-setup` is deprecated: no new images are built. */
export function deprecatedImageProblems(deployment: Deployment): string[] {
  return Object.entries(deployment.compose.services)
    .filter(([, service]) => service.image?.includes('auto-setup'))
    .map(([name, service]) => `${name} uses the deprecated ${service.image}`);
}

/** Every image is `name:${VERSION}`, `VERSION` a version number in `.env`: an upgrade is one edit there. */
export function imagePinningProblems(deployment: Deployment): string[] {
  return Object.entries(deployment.compose.services).flatMap(([name, service]) => {
    if (service.image === undefined) {
      return service.build === undefined ? [`${name} has neither an image nor a build`] : [];
    }
    const variable = /^[a-z0-9./_-]+:\$\{([A-Z][A-Z0-9_]*)\}$/.exec(service.image)?.[1];
    if (variable === undefined) return [`${name}'s image ${service.image} is not pinned by a .env variable`];
    const version = deployment.dotenv.get(variable);
    if (version === undefined) return [`${name}'s image needs ${variable}, which .env does not set`];
    return /^\d+(?:\.\d+)*$/.test(version) ? [] : [`.env sets ${variable}=${version}, not a version number`];
  });
}

/**
 * The worker must reach the Temporal server's frontend by its service name, in the namespace the
 * setup creates, and start only once that server is healthy.
 */
export function connectionProblems(deployment: Deployment): string[] {
  const { services } = deployment.compose;
  const [workerName, worker] = workerService(deployment.compose);
  const environment = environmentOf(worker);
  const problems: string[] = [];
  const [host = '', port] = (environment.get('TEMPORAL_ADDRESS') ?? '').split(':');
  if (!services[host]?.image?.startsWith('temporalio/server:') || port !== '7233') {
    problems.push(
      `${workerName}'s TEMPORAL_ADDRESS is not the temporalio/server service's frontend (host:7233)`,
    );
  } else if (dependencyCondition(worker, host) !== 'service_healthy') {
    problems.push(`${workerName} does not wait for ${host} to be healthy`);
  }
  const namespace = environment.get('TEMPORAL_NAMESPACE');
  const created = Object.entries(services).filter(([, service]) =>
    environmentOf(service).has('DEFAULT_NAMESPACE'),
  );
  if (!created.some(([, service]) => environmentOf(service).get('DEFAULT_NAMESPACE') === namespace)) {
    problems.push(`no setup service creates ${workerName}'s namespace ${namespace}`);
  }
  return problems;
}

/**
 * The worker's workspace and state directory must be mounts (a container's own filesystem is lost
 * with it), and every repository file a container reads must exist: the scripts it runs and the
 * server's dynamic config.
 */
export function mountProblems(deployment: Deployment): string[] {
  const problems: string[] = [];
  const [workerName, worker] = workerService(deployment.compose);
  const environment = environmentOf(worker);
  // With per-run workspaces, the runs' root and their seed are the directories the tools reach.
  const directories =
    environment.get('KEEL_WORKSPACE_MODE') === 'per-run'
      ? ['KEEL_WORKSPACES_DIR', 'KEEL_WORKSPACE_SEED_DIR', 'KEEL_STATE_DIR']
      : ['KEEL_WORKSPACE', 'KEEL_STATE_DIR'];
  for (const variable of directories) {
    const directory = environment.get(variable);
    if (!mountsOf(worker).some((mount) => mount.source !== undefined && mount.target === directory)) {
      problems.push(`${workerName}'s ${variable} (${directory}) is not a mounted volume`);
    }
  }
  for (const [name, service] of Object.entries(deployment.compose.services)) {
    for (const script of scriptsRunBy(deployment, service)) {
      if (script.text === undefined) problems.push(`${name} runs ${script.path}, which does not exist`);
    }
    const dynamicConfig = environmentOf(service).get('DYNAMIC_CONFIG_FILE_PATH');
    if (dynamicConfig !== undefined) {
      // The server resolves a relative path against its working directory, /etc/temporal.
      const file = repositoryPathOf(service, path.posix.resolve('/etc/temporal', dynamicConfig));
      if (file === undefined || deployment.readFile(file) === undefined) {
        problems.push(`${name}'s dynamic config ${dynamicConfig} is not a file mounted from the repository`);
      }
    }
  }
  return problems;
}

/** Compose durations as Keel's tests need them: `30s`, `1m30s`, `500ms`. */
function seconds(duration: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 0.000001 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * units[unit!]!, 0);
}

/**
 * Compose kills a container `stop_grace_period` (default 10 s) after SIGTERM; the worker must get
 * longer than its own shutdown grace, or in-flight activities are killed instead of handed over.
 */
export function shutdownProblems(deployment: Deployment): string[] {
  const [name, worker] = workerService(deployment.compose);
  const grace = Number(environmentOf(worker).get('KEEL_SHUTDOWN_GRACE_SECONDS') ?? 10);
  const stop = seconds(worker.stop_grace_period ?? '10s');
  return stop > grace
    ? []
    : [`${name} is killed ${stop}s after SIGTERM, within its ${grace}s shutdown grace`];
}
