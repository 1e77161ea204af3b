import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { inject } from 'vitest';
import { KeelClient } from '../../../src/client.js';
import { TEST_API_KEY } from '../../support/harness.js';
import { WorkerProcess } from '../../support/process/control.js';
import type { WorkerProcessOptions } from '../../support/process/control.js';
import { startPostgres } from '../../support/postgres.js';
import type { Postgres } from '../../support/postgres.js';
import { ClusterServer, createNamespace, setUpSchema } from './temporal-server.js';

/** The namespace the deployment's create-namespace script makes. */
export const CLUSTER_NAMESPACE = 'default';

/**
 * A Temporal cluster as production runs it: PostgreSQL, its schema set up and the namespace made
 * by the deployment's own scripts, and the real `temporal-server` on it. Worker processes each get
 * a workspace and a state directory of their own, as workers on separate machines have.
 */
export class Cluster {
  readonly workers: WorkerProcess[] = [];

  private constructor(
    readonly postgres: Postgres,
    readonly server: ClusterServer,
    readonly connection: Connection,
    readonly keel: KeelClient,
    readonly taskQueue: string,
  ) {}

  /** Starts PostgreSQL, sets up the schema, starts the server and makes the namespace. */
  static async start(): Promise<Cluster> {
    const build = inject('serverBuild');
    const postgres = await startPostgres();
    let server: ClusterServer | undefined;
    try {
      await setUpSchema(build, postgres);
      server = await ClusterServer.start(build, postgres);
      await createNamespace(server, inject('temporalCliPath'), CLUSTER_NAMESPACE);
      const connection = await Connection.connect({ address: server.address });
      const taskQueue = `keel-cluster-${randomUUID()}`;
      const client = new Client({ connection, namespace: CLUSTER_NAMESPACE });
      return new Cluster(postgres, server, connection, new KeelClient(client, taskQueue), taskQueue);
    } catch (error) {
      await server?.stop();
      await postgres.close();
      throw error;
    }
  }

  /** Starts a worker process as on a machine of its own: its own workspace and state directory. */
  async startWorker(modelUrl: string, overrides: Partial<WorkerProcessOptions> = {}): Promise<WorkerProcess> {
    const worker = await WorkerProcess.start({
      temporalAddress: this.server.address,
      namespace: CLUSTER_NAMESPACE,
      taskQueue: this.taskQueue,
      modelUrl,
      apiKey: TEST_API_KEY,
      workspace: await mkdtemp(path.join(tmpdir(), 'keel-machine-workspace-')),
      stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-machine-state-')),
      bundlePath: inject('workflowBundlePath'),
      ...overrides,
    });
    this.workers.push(worker);
    return worker;
  }

  /** Kills the worker processes still running. */
  async killWorkers(): Promise<void> {
    const running = this.workers.filter(
      (worker) => worker.child.exitCode === null && worker.child.signalCode === null,
    );
    await Promise.all(running.map((worker) => worker.kill()));
  }

  /** Ends everything this cluster started: workers, the server, PostgreSQL. */
  async close(): Promise<void> {
    await this.killWorkers();
    await this.connection.close().catch(() => undefined);
    await this.server.stop();
    await this.postgres.close();
  }
}
