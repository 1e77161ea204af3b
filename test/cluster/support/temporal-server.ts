import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { binDirectory } from '../../support/bin-directory.js';
import { freePort } from '../../support/free-port.js';
import { listensOn } from '../../support/listening-process.js';

const run = promisify(execFile);
const repository = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the server reaches PostgreSQL: what `deploy/scripts/setup-postgres.sh` and the server need. */
export interface DatabaseEndpoint {
  port: number;
  user: string;
  password: string;
}

/** The real Temporal server's build: binaries, config template and schema (scripts/cluster/temporal-server.sh). */
export interface ServerBuild {
  directory: string;
  serverBinary: string;
  sqlTool: string;
  configTemplate: string;
  schemaRoot: string;
}

/** Builds the server when the cache lacks it (about 10 min cold, saying so as it goes), and says where it is. */
export async function temporalServerBuild(): Promise<ServerBuild> {
  const script = path.join(repository, 'scripts/cluster/temporal-server.sh');
  const child = spawn(script, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${script} exited with ${code} (its output is above)`);
  const directory = stdout.trim().split('\n').at(-1)!;
  return {
    directory,
    serverBinary: path.join(directory, 'bin/temporal-server'),
    sqlTool: path.join(directory, 'bin/temporal-sql-tool'),
    configTemplate: path.join(directory, 'config/docker.yaml'),
    schemaRoot: path.join(directory, 'schema/postgresql/v12'),
  };
}

/** The error of a child process, with what it printed. */
function withOutput(what: string, error: unknown): Error {
  const { stdout, stderr } = error as { stdout?: string; stderr?: string };
  return new Error(`${what} failed: ${(error as Error).message}\n${stdout ?? ''}\n${stderr ?? ''}`);
}

/**
 * Creates Temporal's databases and schema with the deployment's own script
 * (`deploy/scripts/setup-postgres.sh`, as the compose stack's temporal-schema service runs it),
 * `temporal-sql-tool` and the schema coming from the server's build.
 */
export async function setUpSchema(build: ServerBuild, database: DatabaseEndpoint): Promise<void> {
  const bin = await binDirectory({ 'temporal-sql-tool': build.sqlTool });
  try {
    await run('sh', [path.join(repository, 'deploy/scripts/setup-postgres.sh')], {
      env: {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        POSTGRES_SEEDS: '127.0.0.1',
        DB_PORT: String(database.port),
        POSTGRES_USER: database.user,
        SQL_PASSWORD: database.password,
        SCHEMA_ROOT: build.schemaRoot,
      },
    });
  } catch (error) {
    throw withOutput('deploy/scripts/setup-postgres.sh', error);
  }
}

/** Ports of every service of one server, chosen once so that a restart binds the same ones. */
async function servicePorts(): Promise<Record<string, string>> {
  const names = [
    'FRONTEND_GRPC_PORT',
    'FRONTEND_HTTP_PORT',
    'FRONTEND_MEMBERSHIP_PORT',
    'MATCHING_GRPC_PORT',
    'MATCHING_MEMBERSHIP_PORT',
    'HISTORY_GRPC_PORT',
    'HISTORY_MEMBERSHIP_PORT',
    'WORKER_GRPC_PORT',
    'WORKER_MEMBERSHIP_PORT',
  ];
  const ports: Record<string, string> = {};
  for (const name of names) ports[name] = String(await freePort());
  return ports;
}

/**
 * The variables the server's config template (config/docker.yaml) is rendered from, less the ports:
 * the ones docker-compose.yml's `temporal` service sets, with this machine's values
 * (test/deploy/docker-compose.test.ts checks that compose sets no other).
 */
export function serverEnvironment(
  database: DatabaseEndpoint,
  metricsAddress: string,
): Record<string, string> {
  return {
    DB: 'postgres12',
    DB_PORT: String(database.port),
    // The template reads the visibility store's port from VISIBILITY_DB_PORT or POSTGRES_PORT, not DB_PORT.
    VISIBILITY_DB_PORT: String(database.port),
    POSTGRES_SEEDS: '127.0.0.1',
    POSTGRES_USER: database.user,
    POSTGRES_PWD: database.password,
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: path.join(repository, 'deploy/dynamicconfig/production-sql.yaml'),
    TEMPORAL_ALLOW_NO_AUTH: 'true',
    PROMETHEUS_ENDPOINT: metricsAddress,
    LOG_LEVEL: 'warn',
  };
}

/** How long a server may take to answer after it starts (it waits for its own ring membership). */
const START_TIMEOUT_MS = 90_000;

/**
 * One `temporal-server` process on PostgreSQL, started from the server's own config template with the
 * environment variables the compose stack's `temporal` service sets (DB, POSTGRES_SEEDS, ...,
 * DYNAMIC_CONFIG_FILE_PATH = deploy/dynamicconfig/production-sql.yaml), each service on a port of its
 * own. It can be killed and started again on the same ports and database.
 */
export class ClusterServer {
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();

  private constructor(
    readonly build: ServerBuild,
    readonly environment: NodeJS.ProcessEnv,
    readonly logFile: string,
    readonly address: string,
    readonly metricsUrl: string,
  ) {}

  /** Starts a server on `database` (schema set up) and waits until it answers. */
  static async start(build: ServerBuild, database: DatabaseEndpoint): Promise<ClusterServer> {
    const ports = await servicePorts();
    const metricsPort = await freePort();
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-temporal-server-'));
    const environment: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...serverEnvironment(database, `127.0.0.1:${metricsPort}`),
      ...ports,
    };
    const server = new ClusterServer(
      build,
      environment,
      path.join(directory, 'temporal-server.log'),
      `127.0.0.1:${ports.FRONTEND_GRPC_PORT}`,
      `http://127.0.0.1:${metricsPort}/metrics`,
    );
    await server.start();
    return server;
  }

  /** The server process's PID while it runs. */
  get pid(): number | undefined {
    const child = this.#child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Starts the server process (again) and waits until its own frontend answers. */
  async start(): Promise<void> {
    if (this.pid !== undefined) throw new Error(`the Temporal server already runs (PID ${this.pid})`);
    const log = await open(this.logFile, 'a');
    let child: ChildProcess;
    try {
      await log.write(`--- ${new Date().toISOString()} start\n`);
      child = spawn(this.build.serverBinary, ['--config-file', this.build.configTemplate, 'start'], {
        env: this.environment,
        cwd: path.dirname(this.logFile),
        stdio: ['ignore', log.fd, log.fd],
      });
    } finally {
      await log.close();
    }
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const port = Number(this.environment.FRONTEND_GRPC_PORT);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (this.pid === undefined)
        throw new Error(`the Temporal server exited while starting:\n${await this.logTail()}`);
      // Only our process's own listening socket counts: someone else's server on the port would answer too.
      if ((await listensOn(child.pid!, port)) && (await answers(this.address))) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(
          `the Temporal server did not answer in ${START_TIMEOUT_MS / 1000} s:\n${await this.logTail()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** SIGKILL: a crash, nothing flushed. Waits until the process is gone. */
  async kill(): Promise<void> {
    this.#child?.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM, and waits until the process is gone. */
  async stop(): Promise<void> {
    this.#child?.kill('SIGTERM');
    await this.#exited;
  }

  /** The end of the server's log, for an error message. */
  async logTail(lines = 30): Promise<string> {
    const text = await readFile(this.logFile, 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }
}

/** Whether the frontend at `address` answers `GetSystemInfo`, within a few seconds. */
async function answers(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: '2s' });
    try {
      await connection.workflowService.getSystemInfo({});
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

/**
 * Creates the namespace and Keel's search attributes with the deployment's own script
 * (`deploy/scripts/create-namespace.sh`, as the compose stack's temporal-namespace service runs it),
 * with the `temporal` CLI at `temporalCli` and `nc` from PATH.
 */
export async function createNamespace(
  server: ClusterServer,
  temporalCli: string,
  namespace: string,
): Promise<void> {
  const bin = await binDirectory({ temporal: temporalCli });
  try {
    await run('sh', [path.join(repository, 'deploy/scripts/create-namespace.sh')], {
      env: {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: server.address,
        DEFAULT_NAMESPACE: namespace,
      },
    });
  } catch (error) {
    throw withOutput('deploy/scripts/create-namespace.sh', error);
  }
}
