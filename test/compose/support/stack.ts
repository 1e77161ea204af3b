import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { freePort } from '../../support/free-port.js';
import { until } from '../../support/until.js';

export { until } from '../../support/until.js';

const run = promisify(execFile);
const repository = fileURLToPath(new URL('../../..', import.meta.url));

/** Every service of docker-compose.yml. */
export const SERVICES = [
  'postgresql',
  'temporal-schema',
  'temporal',
  'temporal-namespace',
  'temporal-ui',
  'keel',
] as const;
export type Service = (typeof SERVICES)[number];

/** Runs one of the repository's scripts and returns the last line it printed. */
async function script(name: string): Promise<string> {
  const { stdout } = await run(path.join(repository, 'scripts/compose', name), [], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim().split('\n').at(-1) ?? '';
}

/**
 * docker-compose.yml brought up with Podman as a user would run it (`scripts/compose/`): Podman set
 * up, the upstream images' local stand-ins built, the Keel image built from the Dockerfile, under a
 * project name of its own, the frontend and the Web UI published on free loopback ports.
 */
export class ComposeStack {
  readonly project = `keel-test-${randomUUID().slice(0, 8)}`;
  readonly environment: NodeJS.ProcessEnv;
  #compose = '';
  #connection: Connection | undefined;

  private constructor(
    readonly temporalPort: number,
    readonly uiPort: number,
    readonly workspace: string,
    postgresqlVersion: string,
  ) {
    this.environment = {
      ...process.env,
      POSTGRESQL_VERSION: postgresqlVersion,
      TEMPORAL_HOST_PORT: String(temporalPort),
      TEMPORAL_UI_HOST_PORT: String(uiPort),
      KEEL_HOST_WORKSPACE: workspace,
      OPENAI_API_KEY: 'sk-compose-test-key',
    };
  }

  /** Sets Podman up and builds every image the stack needs (each cached until its inputs change). */
  static async prepare(): Promise<ComposeStack> {
    await script('podman.sh');
    const postgresqlVersion = await script('stand-in-images.sh');
    // Readable by the image's user (uid 1000), as a checkout's files are (mkdtemp makes it 0700).
    const workspace = await mkdtemp(path.join(tmpdir(), 'keel-compose-workspace-'));
    await chmod(workspace, 0o755);
    await writeFile(path.join(workspace, 'notes.txt'), 'The stack keeps its runs.\n', { mode: 0o644 });
    const stack = new ComposeStack(await freePort(), await freePort(), workspace, postgresqlVersion);
    stack.#compose = await script('podman-compose.sh');
    await stack.compose('build', 'keel');
    return stack;
  }

  /** `podman-compose -p <project> <args>` in the repository, with the stack's environment. */
  async compose(...args: string[]): Promise<string> {
    const { stdout } = await run(this.#compose, ['-p', this.project, ...args], {
      cwd: repository,
      env: this.environment,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  /** `up -d` of the given services (see scripts/compose/podman-compose.sh for --no-deps). */
  async up(services: readonly Service[] = SERVICES): Promise<void> {
    await this.compose('up', '-d', '--no-deps', ...services);
  }

  /** The image `podman-compose build` made from the Dockerfile. */
  get keelImage(): string {
    return `localhost/${this.project}_keel:latest`;
  }

  container(service: Service): string {
    return `${this.project}_${service}_1`;
  }

  /** The address containers on the stack's network reach the host at. */
  async gateway(): Promise<string> {
    const { stdout } = await run('podman', ['network', 'inspect', `${this.project}_default`]);
    const [network] = JSON.parse(stdout) as {
      plugins?: { ipam?: { ranges?: { gateway?: string }[][] } }[];
      subnets?: { gateway?: string }[];
    }[];
    const gateway =
      network?.subnets?.[0]?.gateway ??
      network?.plugins?.flatMap((plugin) => plugin.ipam?.ranges?.flat() ?? []).find((range) => range.gateway)
        ?.gateway;
    if (gateway === undefined) throw new Error(`no gateway in ${stdout}`);
    return gateway;
  }

  /** A client of the stack's Temporal frontend, through its published port. */
  async client(): Promise<Client> {
    this.#connection ??= await Connection.connect({ address: `127.0.0.1:${this.temporalPort}` });
    return new Client({ connection: this.#connection, namespace: 'default' });
  }

  /** Waits until the namespace job is done and the stack's worker polls its task queue. */
  async ready(): Promise<void> {
    const client = await this.client();
    await until(async () => {
      const { customAttributes } = await client.connection.operatorService.listSearchAttributes({
        namespace: 'default',
      });
      return 'KeelTokens' in (customAttributes ?? {});
    }, 'the namespace job has registered Keel search attributes');
    await until(async () => {
      const { pollers } = await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: 'keel' },
        taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (pollers ?? []).length > 0;
    }, 'the keel container polls task queue keel');
  }

  /** GETs a path of the Web UI's server on its published port and returns the JSON it answered. */
  async fromUi(pathname: string): Promise<unknown> {
    const response = await fetch(`http://127.0.0.1:${this.uiPort}${pathname}`);
    if (!response.ok) throw new Error(`GET ${pathname} from the Web UI answered ${response.status}`);
    return await response.json();
  }

  /** How many times Podman has restarted a container after it exited. */
  async restarts(service: Service): Promise<number> {
    const { stdout } = await run('podman', [
      'inspect',
      '--format',
      '{{.RestartCount}}',
      this.container(service),
    ]);
    return Number(stdout.trim());
  }

  async podman(...args: string[]): Promise<string> {
    const { stdout } = await run('podman', args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  }

  /**
   * Kills the worker's Node process inside the keel container with SIGKILL, as a crash would: the
   * container exits and its restart policy starts it again (`podman kill` would count as stopped
   * by hand, which `unless-stopped` leaves stopped).
   */
  async crashWorker(): Promise<void> {
    await this.podman(
      'exec',
      this.container('keel'),
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do [ "$(cat "$p/comm")" = node ] && kill -KILL "${p#/proc/}"; done; true',
    );
  }

  /** The last lines of every container's log, for a failed test's report. */
  async logs(): Promise<string> {
    const parts: string[] = [];
    for (const service of SERVICES) {
      const name = this.container(service);
      try {
        const { stdout, stderr } = await run('podman', ['logs', '--tail', '80', name], {
          maxBuffer: 64 * 1024 * 1024,
        });
        parts.push(`--- ${name}\n${stdout}${stderr}`);
      } catch (error) {
        parts.push(`--- ${name}: no log (${String(error)})`);
      }
    }
    return parts.join('\n');
  }

  /** The names of the project's containers, running or not. */
  async containers(): Promise<string[]> {
    const { stdout } = await run('podman', ['ps', '-a', '--format', '{{.Names}}']);
    return stdout.split('\n').filter((name) => name.startsWith(`${this.project}_`));
  }

  /** `down`, keeping the volumes. */
  async down(): Promise<void> {
    await this.#connection?.close();
    this.#connection = undefined;
    await this.compose('down');
  }

  /** `down -v`: every container, the network and the volumes of the project. */
  async remove(): Promise<void> {
    await this.#connection?.close();
    this.#connection = undefined;
    await this.compose('down', '-v').catch(() => undefined);
    // Podman 4.3's `down` leaves a container behind when one of its dependencies is gone first.
    const left = await this.containers();
    if (left.length > 0) await run('podman', ['rm', '-f', ...left]);
    const volumes = await run('podman', ['volume', 'ls', '--format', '{{.Name}}']);
    const leftVolumes = volumes.stdout.split('\n').filter((name) => name.startsWith(`${this.project}_`));
    if (leftVolumes.length > 0) await run('podman', ['volume', 'rm', '-f', ...leftVolumes]);
    await run('podman', ['network', 'rm', '-f', `${this.project}_default`]).catch(() => undefined);
    await run('podman', ['rmi', '-f', this.keelImage]).catch(() => undefined);
    await rm(this.workspace, { recursive: true, force: true });
  }
}
