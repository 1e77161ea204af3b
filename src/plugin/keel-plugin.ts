import { SimplePlugin } from '@temporalio/plugin';
import type { PayloadCodec } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import { ConfigError } from '../config-error.js';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';
import type { KeelActivityName } from '../contract/activity-names.js';
import { formatIssues } from '../contract/format-issues.js';
import { KeelOptions } from './keel-options.js';
import type { ResolvedKeelOptions } from './keel-options.js';
import { prepareActivities } from './prepare.js';
import { runIsOpenIn, startSweeping } from './workspace-sweeper.js';
import { startOwnQueue } from './own-queue-worker.js';
import type { Prepared } from './prepare.js';

/**
 * Keel on a Temporal worker you already run: `Worker.create({ plugins: [new KeelPlugin({...})] })`
 * registers Keel's activities beside yours, under `keel.`-prefixed names, and your workflow bundle
 * gets the agent workflow by re-exporting `agentRun` from `keel/workflow`. What needs I/O (opening the
 * workspace, the start-up checks, MCP servers) happens when the worker runs, or earlier with
 * {@link prepare}: do that before `worker.runUntil(…)`, which only stops a worker that is already
 * polling when its body ends.
 */
export class KeelPlugin extends SimplePlugin {
  /** The options, checked and with their defaults. */
  readonly keelOptions: ResolvedKeelOptions;
  #prepared: Promise<Prepared> | undefined;
  /** What {@link prepare} made once it has finished, so a worker may start polling without waiting a tick. */
  #ready: Prepared | undefined;
  /** Workers running with this plugin: the MCP servers stop when the last one does. */
  #running = 0;
  /** The payload codecs of the worker running with this plugin (encryption): live streams are encoded with them too. */
  #codecs: readonly PayloadCodec[] = [];

  constructor(options: KeelOptions) {
    const parsed = KeelOptions.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(`KeelPlugin options are invalid:\n  ${formatIssues(parsed.error).join('\n  ')}`);
    }
    const self: { plugin?: KeelPlugin } = {};
    super({
      name: 'keel',
      activities: (existing) =>
        withKeelActivities(
          existing,
          () => self.plugin!.prepare(),
          self.plugin!.keelOptions.legacyActivityNames,
        ),
    });
    self.plugin = this;
    this.keelOptions = parsed.data;
  }

  /**
   * Opens the workspace and runs the start-up checks, once: rejects with a `ConfigError` saying what
   * to fix. The worker calls it before it polls; call it yourself to fail before `Worker.create`.
   */
  prepare(): Promise<Prepared> {
    // A failed preparation is not kept: the next call (a retry once the MCP server is up) tries again.
    this.#prepared ??= prepareActivities(this.keelOptions, () => this.#codecs).then(
      (prepared) => {
        this.#ready = prepared;
        return prepared;
      },
      (error: unknown) => {
        this.#prepared = undefined;
        throw error;
      },
    );
    return this.#prepared;
  }

  /**
   * Stops what {@link prepare} started (the MCP server processes). The last worker running with the
   * plugin does it when it stops; call it yourself for a plugin whose worker never ran.
   */
  async close(): Promise<void> {
    const prepared = this.#prepared;
    this.#prepared = undefined;
    this.#ready = undefined;
    await (await prepared?.catch(() => undefined))?.close();
  }

  /** Prepares before the worker polls, so a misconfigured worker never takes a task; closes after it. */
  override async runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    // Already prepared (createKeelWorker, or `await plugin.prepare()` first): poll at once. Waiting even
    // a tick would let a `worker.runUntil` whose body ends first find the worker not yet running and
    // never shut it down.
    const prepared = this.#ready ?? (await this.prepare());
    // The worker's codecs once every plugin has had its say: live streams are encoded with them too.
    this.#codecs = worker.options.loadedDataConverter.payloadCodecs;
    this.#running += 1;
    const sweeper = sweeperFor(prepared, worker, this.keelOptions);
    // The worker's own queue starts beside the shared one, not before it, for the same reason: it
    // takes a round trip to the server. Until it polls, `openWorkspace` asks for a retry elsewhere;
    // if it cannot start, the worker stops with its error.
    let ownFailure: Error | undefined;
    const own = startOwnQueue(prepared, worker, this.keelOptions.logger ?? console).catch(
      async (error: unknown) => {
        ownFailure = error instanceof Error ? error : new Error(String(error));
        await stopWhenRunning(worker);
        return undefined;
      },
    );
    try {
      await super.runWorker(worker, next);
      if (ownFailure !== undefined) throw ownFailure;
    } finally {
      await (await own)?.stop();
      await sweeper?.stop();
      this.#running -= 1;
      // A failure to stop an MCP server must not hide how the worker itself ended.
      if (this.#running === 0)
        await this.close().catch((error: unknown) => {
          (this.keelOptions.logger ?? console).warn(
            `Keel could not close its MCP servers: ${(error as Error).message}`,
          );
        });
    }
  }
}

/** Shuts `worker` down once it runs (it may still be starting); nothing if it already stopped. */
async function stopWhenRunning(worker: Worker): Promise<void> {
  while (worker.getState() === 'INITIALIZED') await new Promise((resolve) => setTimeout(resolve, 10));
  if (worker.getState() === 'RUNNING') worker.shutdown();
}

/** Removes the workspaces of ended runs while the worker runs, when each run has its own. */
function sweeperFor(prepared: Prepared, worker: Worker, options: ResolvedKeelOptions) {
  const settings = options.runWorkspaces;
  const connection = worker.connection;
  if (prepared.workspaces === undefined || settings === undefined || connection === undefined)
    return undefined;
  return startSweeping(
    prepared.workspaces,
    runIsOpenIn(connection, worker.options.namespace),
    settings.sweepIntervalSeconds,
    options.logger ?? console,
  );
}

/** Marks the activities this plugin adds, so a second registration of Keel (plugin on the connection too) is no clash. */
const KEEL_ACTIVITY = Symbol.for('keel.activity');

/**
 * The worker's activities with Keel's added: each under its prefixed name, and, when asked, under the
 * name runs recorded before the prefix schedule unless the worker has an activity of that name itself.
 */
function withKeelActivities(
  existing: object | undefined,
  prepared: () => Promise<Prepared>,
  legacy: boolean,
): object {
  const own = (existing ?? {}) as Record<string, unknown>;
  const isKeels = (name: string): boolean =>
    typeof own[name] === 'function' && (own[name] as { [KEEL_ACTIVITY]?: true })[KEEL_ACTIVITY] === true;
  const added: Record<string, unknown> = {};
  for (const name of Object.keys(ACTIVITY_NAMES) as KeelActivityName[]) {
    if (Object.hasOwn(own, ACTIVITY_NAMES[name]) && !isKeels(ACTIVITY_NAMES[name])) {
      throw new ConfigError(
        `The worker already has an activity named ${ACTIVITY_NAMES[name]}, which Keel needs for itself`,
      );
    }
    const forward = Object.assign(
      async (...args: unknown[]): Promise<unknown> => {
        const { activities } = await prepared();
        return (activities[ACTIVITY_NAMES[name]] as (...args: unknown[]) => Promise<unknown>)(...args);
      },
      { [KEEL_ACTIVITY]: true as const },
    );
    added[ACTIVITY_NAMES[name]] = forward;
    const legacyName = LEGACY_ACTIVITY_NAMES[name];
    if (legacy && (!Object.hasOwn(own, legacyName) || isKeels(legacyName))) added[legacyName] = forward;
  }
  return { ...own, ...added };
}
