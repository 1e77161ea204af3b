import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_TASK_QUEUE } from '../../src/contract/defaults.js';
import { KEEL_SERVER_DYNAMIC_CONFIG } from '../../src/server-settings.js';
import { keelSearchAttributes } from '../../src/workflows/search-attributes.js';
import { environmentNamesReadByCode } from './code-environment.js';
import {
  connectionProblems,
  deprecatedImageProblems,
  environmentProblems,
  imagePinningProblems,
  mountProblems,
  schemaProblems,
  searchAttributesCreatedBy,
  searchAttributeProblems,
  shutdownProblems,
  taskQueueProblems,
} from './compose-checks.js';
import { serverEnvironment } from '../cluster/support/temporal-server.js';
import { workerConfigFromEnvironment } from '../../src/config.js';
import {
  editedDeployment,
  environmentOf,
  loadDeployment,
  repositoryRoot,
  workerService,
} from './deployment.js';
import type { ComposeFile, ComposeService } from './deployment.js';

/*
 * Docker cannot run here, so the stack is checked statically: against the Compose Specification
 * schema and against the code it deploys. Each test also shows its check failing on an edited copy,
 * so a check that can no longer see anything cannot pass silently.
 */

const deployment = loadDeployment();
const codeSearchAttributes = keelSearchAttributes.map((key) => ({ name: key.name, type: key.type }));

function worker(compose: ComposeFile): ComposeService {
  return workerService(compose)[1];
}

function workerEnvironment(compose: ComposeFile): Record<string, string> {
  return worker(compose).environment as Record<string, string>;
}

describe('docker-compose.yml', () => {
  it('is a valid Compose file by the Compose Specification schema', () => {
    expect(schemaProblems(deployment)).toEqual([]);
    const broken = editedDeployment(deployment, (compose) => {
      worker(compose).depends_on = { temporal: { condition: 'service_ready' } };
    });
    expect(schemaProblems(broken)).not.toEqual([]);
  });

  it('runs the worker on the task queue clients start runs on by default', () => {
    expect(taskQueueProblems(deployment, DEFAULT_TASK_QUEUE)).toEqual([]);
    const other = editedDeployment(deployment, (compose) => {
      workerEnvironment(compose).KEEL_TASK_QUEUE = 'elsewhere';
    });
    expect(taskQueueProblems(other, DEFAULT_TASK_QUEUE)).toEqual([
      `keel sets KEEL_TASK_QUEUE=elsewhere, but clients default to ${DEFAULT_TASK_QUEUE}`,
    ]);
  });

  it('sets only environment variables the worker reads', () => {
    const namesRead = environmentNamesReadByCode(repositoryRoot);
    expect(namesRead).toContain('KEEL_TASK_QUEUE');
    expect(namesRead).toContain('TEMPORAL_ADDRESS');
    expect(environmentProblems(deployment, namesRead)).toEqual([]);
    const typo = editedDeployment(deployment, (compose) => {
      workerEnvironment(compose).KEEL_TASKQUEUE = 'keel';
    });
    expect(environmentProblems(typo, namesRead)).toEqual([
      'keel sets KEEL_TASKQUEUE, which the code never reads',
    ]);
  });

  it("registers exactly Keel's search attributes, with their types, before the worker starts", () => {
    expect(searchAttributeProblems(deployment, codeSearchAttributes)).toEqual([]);
    const script = 'deploy/scripts/create-namespace.sh';
    const original = deployment.readFile(script)!;
    const wrongType = editedDeployment(deployment, () => {}, {
      [script]: original.replace('--name KeelTurns --type Int', '--name KeelTurns --type Keyword'),
    });
    expect(searchAttributeProblems(wrongType, codeSearchAttributes)).toEqual([
      'temporal-namespace registers KeelTurns as Keyword, the code uses INT',
    ]);
    const unregistered = [...codeSearchAttributes, { name: 'KeelCost', type: 'DOUBLE' }];
    expect(searchAttributeProblems(deployment, unregistered)).toEqual([
      'temporal-namespace does not register KeelCost',
    ]);
    const notWaitedFor = editedDeployment(deployment, (compose) => {
      worker(compose).depends_on = { temporal: { condition: 'service_healthy' } };
    });
    expect(searchAttributeProblems(notWaitedFor, codeSearchAttributes)).toEqual([
      'keel does not wait for temporal-namespace to complete successfully',
    ]);
  });

  it('reads every search attribute pair of a registration command', () => {
    expect(
      searchAttributesCreatedBy(
        'temporal operator search-attribute create \\\n  --name A --type Keyword --name "B" --type Int\n',
      ),
    ).toEqual([
      { name: 'A', type: 'Keyword' },
      { name: 'B', type: 'Int' },
    ]);
  });

  it('runs temporalio/server and admin-tools, never the deprecated auto-setup image', () => {
    expect(deprecatedImageProblems(deployment)).toEqual([]);
    const images = Object.values(deployment.compose.services).map((service) => service.image ?? '');
    expect(images.some((image) => image.startsWith('temporalio/server:'))).toBe(true);
    expect(images.some((image) => image.startsWith('temporalio/admin-tools:'))).toBe(true);
    const old = editedDeployment(deployment, (compose) => {
      compose.services.temporal!.image = 'temporalio/auto-setup:${TEMPORAL_VERSION}';
    });
    expect(deprecatedImageProblems(old)).toEqual([
      'temporal uses the deprecated temporalio/auto-setup:${TEMPORAL_VERSION}',
    ]);
  });

  it('pins every image to a version set in .env', () => {
    expect(imagePinningProblems(deployment)).toEqual([]);
    const unpinned = editedDeployment(deployment, (compose) => {
      compose.services['temporal-ui']!.image = 'temporalio/ui:latest';
      compose.services.postgresql!.image = 'postgres:${POSTGRES_MAJOR}';
    });
    expect(imagePinningProblems(unpinned)).toEqual([
      "postgresql's image needs POSTGRES_MAJOR, which .env does not set",
      "temporal-ui's image temporalio/ui:latest is not pinned by a .env variable",
    ]);
  });

  it('points the worker at the Temporal frontend, in the namespace the setup creates', () => {
    expect(connectionProblems(deployment)).toEqual([]);
    const lost = editedDeployment(deployment, (compose) => {
      workerEnvironment(compose).TEMPORAL_ADDRESS = 'localhost:7233';
      workerEnvironment(compose).TEMPORAL_NAMESPACE = 'keel';
    });
    expect(connectionProblems(lost)).toEqual([
      "keel's TEMPORAL_ADDRESS is not the temporalio/server service's frontend (host:7233)",
      "no setup service creates keel's namespace keel",
    ]);
  });

  it('mounts the worker state, the runs’ workspaces and every file a container reads from the repository', () => {
    expect(mountProblems(deployment)).toEqual([]);
    const missing = editedDeployment(
      deployment,
      (compose) => {
        worker(compose).volumes = [];
      },
      {
        'deploy/scripts/setup-postgres.sh': undefined,
        'deploy/dynamicconfig/production-sql.yaml': undefined,
      },
    );
    expect(mountProblems(missing)).toEqual([
      "keel's KEEL_WORKSPACES_DIR (/var/lib/keel-workspaces) is not a mounted volume",
      "keel's KEEL_WORKSPACE_SEED_DIR (/workspace) is not a mounted volume",
      "keel's KEEL_STATE_DIR (/var/lib/keel) is not a mounted volume",
      'temporal-schema runs deploy/scripts/setup-postgres.sh, which does not exist',
      "temporal's dynamic config config/dynamicconfig/production-sql.yaml is not a file mounted from the repository",
    ]);
  });

  it('lets the worker finish its shutdown grace before Compose kills it', () => {
    expect(shutdownProblems(deployment)).toEqual([]);
    const hasty = editedDeployment(deployment, (compose) => {
      delete worker(compose).stop_grace_period;
    });
    expect(shutdownProblems(hasty)).toEqual([
      'keel is killed 10s after SIGTERM, within its 20s shutdown grace',
    ]);
  });

  it("gives the server the dynamic config Keel's local server gets", () => {
    const file = path.join(repositoryRoot, 'deploy', 'dynamicconfig', 'production-sql.yaml');
    type Setting = Array<{ value: unknown; constraints?: Record<string, unknown> }>;
    const config = parse(readFileSync(file, 'utf8')) as Record<string, Setting | undefined>;
    const globalValue = (key: string) =>
      config[key]?.find((entry) => Object.keys(entry.constraints ?? {}).length === 0)?.value;
    expect(Object.keys(KEEL_SERVER_DYNAMIC_CONFIG)).toContain('history.transferProcessorMaxPollRPS');
    const differing = Object.entries(KEEL_SERVER_DYNAMIC_CONFIG)
      .filter(([key, value]) => globalValue(key) !== value)
      .map(([key]) => key);
    expect(differing).toEqual([]);
  });
});

describe('docker-compose.yml and the cluster suite (test/cluster)', () => {
  const database = { port: 5432, user: 'temporal', password: 'temporal' };
  const clusterVariables = Object.keys(serverEnvironment(database, '127.0.0.1:9090'));

  it("sets only server variables the cluster suite's server is run with", () => {
    const compose = Object.keys(deployment.compose.services.temporal!.environment as Record<string, string>);
    expect(compose).toContain('TEMPORAL_ALLOW_NO_AUTH');
    expect(compose.filter((name) => !clusterVariables.includes(name))).toEqual([]);
    expect(clusterVariables).not.toContain('TEMPORAL_AUTH_AUTHORIZER');
  });

  it('runs the server version the cluster suite builds, with admin-tools of the same version', () => {
    const script = readFileSync(path.join(repositoryRoot, 'scripts/cluster/temporal-server.sh'), 'utf8');
    const built = /^version=\$\{KEEL_TEMPORAL_SERVER_VERSION:-([\d.]+)\}$/mu.exec(script)?.[1];
    const env = readFileSync(path.join(repositoryRoot, '.env'), 'utf8');
    const pinned = (name: string) => new RegExp(`^${name}=(.+)$`, 'mu').exec(env)?.[1];
    expect(built).toMatch(/^\d+\.\d+\.\d+$/u);
    expect(pinned('TEMPORAL_VERSION')).toBe(built);
    expect(pinned('TEMPORAL_ADMINTOOLS_VERSION')).toBe(built);
  });
});

describe('the worker container', () => {
  /** The image's `ENV` settings (`ENV A=1 B=2` lines of the Dockerfile's last stage). */
  function imageEnvironment(): Record<string, string> {
    const dockerfile = readFileSync(path.join(repositoryRoot, 'Dockerfile'), 'utf8');
    const stages = dockerfile.split(/^FROM /mu);
    const entries = [...stages.at(-1)!.matchAll(/^ENV (.+)$/gmu)].flatMap((line) =>
      line[1]!
        .trim()
        .split(/\s+/u)
        .map((pair) => pair.split('=') as [string, string]),
    );
    return Object.fromEntries(entries);
  }

  /** Compose's value of a variable, with `${NAME:-default}` and `${NAME:?message}` as Compose resolves them unset. */
  function composed(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    return value
      .replace(/\$\{OPENAI_API_KEY:\?[^}]*\}/gu, 'sk-set-by-the-operator')
      .replace(/\$\{[A-Z_]+:-([^}]*)\}/gu, '$1');
  }

  const workerEnvironment = (compose: ComposeFile): NodeJS.ProcessEnv => {
    const environment: NodeJS.ProcessEnv = { ...imageEnvironment() };
    for (const [name, value] of environmentOf(worker(compose))) environment[name] = composed(value);
    return environment;
  };

  it("starts with the image's settings and Compose's together: the worker accepts them", () => {
    expect(imageEnvironment()).toHaveProperty('KEEL_STATE_DIR');
    expect(() => workerConfigFromEnvironment(workerEnvironment(deployment.compose))).not.toThrow();
    const clashing = editedDeployment(deployment, (compose) => {
      delete (worker(compose).environment as Record<string, string>).KEEL_WORKSPACE;
    });
    expect(() => workerConfigFromEnvironment(workerEnvironment(clashing.compose))).toThrow(/KEEL_WORKSPACE/u);
  });
});
