import { randomUUID } from 'node:crypto';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { CombinedWorkerRunError, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { workerConfigFromEnvironment, workspaceProtectFromEnvironment } from '../config.js';
import type { WorkerConfig } from '../config.js';
import { ConfigError } from '../config-error.js';
import type { RunInputArgs } from '../contract/run-input.js';
import { createOpenAIClient } from '../model/client.js';
import { registerSearchAttributes } from '../search-attributes-setup.js';
import type { ScriptedModel } from '../testing/scripted-model.js';
import { checkRunCommandSandbox, createKeelWorker, keelOptionsFromConfig } from '../worker.js';
import { DEMO_MODEL, startDemoModel } from './demo.js';
import { localServerRunning, resolveTarget } from './embedded.js';
import type { TemporalTarget } from './embedded.js';
import { followRun } from './follow.js';
import { onInterrupt } from './interrupt.js';
import { connectClient, dataDirectory, EXIT, workersPolling } from './io.js';
import type { Output } from './io.js';

/** What `keel run` was asked to do. */
export interface RunCommandOptions {
  input: RunInputArgs;
  runId: string | undefined;
  taskQueue: string;
  detach: boolean;
  demo: boolean;
}

/**
 * `keel run "<task>"`: starts a run and follows it. Without `TEMPORAL_ADDRESS` it uses the local dev
 * server (starting one if none runs) and hosts a worker in this process unless one already serves
 * the task queue (a `keel worker` elsewhere); with it, it only talks to that cluster. `--demo` hosts a worker with a built-in scripted model instead of a real
 * one. Ctrl-C asks whether to cancel the run or detach from it.
 */
export async function runCommand(out: Output, options: RunCommandOptions): Promise<number> {
  const remote = loadClientConnectConfig().connectionOptions.address !== undefined;
  // A local server that is not running yet will be started here, and then only this process can
  // host the worker: check its configuration before starting anything.
  let config = !options.demo && !remote && !(await localServerRunning()) ? requireWorkerConfig() : undefined;
  // Before anything creates the SDK's runtime (starting the local server does): this process answers
  // Ctrl-C itself (cancel or detach), so a worker it hosts must not shut down on it, and the worker's
  // lifecycle chatter would drown the progress lines: warnings and errors only.
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  const target = await resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: !remote });
  const taskQueue = options.demo ? `keel-demo-${randomUUID().slice(0, 8)}` : options.taskQueue;
  let demoModel: ScriptedModel | undefined;
  let hosted: { worker: Worker; connection: NativeConnection } | undefined;
  const client = await connectClient(target, taskQueue);
  try {
    // Host a worker for the demo, and locally when no worker (say, `keel worker`) serves the queue.
    const hostWorker = options.demo || (!remote && !(await workersPolling(client.keel)));
    if (hostWorker && !options.demo) config ??= requireWorkerConfig();
    if (hostWorker) {
      demoModel = options.demo ? await startDemoModel() : undefined;
      hosted = await hostWorkerFor(target, taskQueue, config, demoModel);
    }
    const session = async (): Promise<number> => {
      const runId = await client.keel.startRun(
        options.input,
        options.runId ? { runId: options.runId, idempotent: true } : {},
      );
      const announce = (): void => {
        out.note(`Run ${runId} started${options.demo ? ' with the scripted demo model' : ''}.`);
        if (target.uiUrl)
          out.note(`Watch it: ${target.uiUrl}/namespaces/${target.namespace}/workflows/${runId}`);
      };
      if (options.detach) {
        announce();
        if (out.json) out.data({ runId });
        else out.line(runId);
        if (hosted)
          out.note(
            'This process hosted the only worker; the run goes on once one runs again (`keel worker`).',
          );
        return EXIT.ok;
      }
      const controller = new AbortController();
      // Listen for Ctrl-C before saying anything: until a listener exists, SIGINT would kill the process.
      const stopAsking = onInterrupt(
        out,
        async () => {
          await client.keel.cancelRun(runId);
          out.note('Cancelling…');
        },
        () => controller.abort(),
      );
      announce();
      try {
        const outcome = await followRun(client.keel, runId, {
          progress: !out.json,
          write: out.line,
          signal: controller.signal,
          // A session stays open after its answer: following stops there and the session waits for `keel send`.
          ...(options.input.session === true ? { untilAnswered: 1 } : {}),
        });
        if (out.json) out.data({ runId, ...outcome });
        if (outcome.kind === 'answered' && hosted)
          out.note(
            'This process hosted the only worker; messages are answered once one runs (`keel worker`).',
          );
        if (outcome.kind === 'answered') return EXIT.ok;
        if (outcome.kind === 'detached') {
          out.note(`Detached from ${runId}. \`keel follow ${runId}\` to watch it again.`);
          if (hosted)
            out.note(
              'This process hosted the only worker; the run goes on once one runs again (`keel worker`).',
            );
          return EXIT.ok;
        }
        return outcome.kind === 'ended' && outcome.result.status === 'completed'
          ? EXIT.ok
          : EXIT.notCompleted;
      } finally {
        stopAsking();
      }
    };
    // The hosted worker runs exactly as long as the session: runUntil shuts it down when the session
    // ends, and should the worker fail first, the command fails at once with the worker's error.
    return hosted ? await runHosting(hosted.worker, session) : await session();
  } finally {
    await client.close();
    await hosted?.connection.close();
    await demoModel?.close();
    await target.embedded?.stop();
  }
}

/** The worker configuration from the environment, with a hint at the demo when the model is missing. */
export function requireWorkerConfig(): WorkerConfig {
  try {
    return workerConfigFromEnvironment();
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new ConfigError(
        `${error.message}\nTo watch the whole pipeline without a key: keel run --demo "<task>"`,
      );
    }
    throw error;
  }
}

/** A worker for `taskQueue` hosted in this process (`keel run`, `keel chat`): the demo's or the configured one. */
export async function hostWorkerFor(
  target: TemporalTarget,
  taskQueue: string,
  config: WorkerConfig | undefined,
  demoModel: ScriptedModel | undefined,
): Promise<{ worker: Worker; connection: NativeConnection }> {
  if (config) await checkRunCommandSandbox(config, quietLogger);
  const connection = await NativeConnection.connect(target.connectionOptions);
  const searchAttributes = await registerSearchAttributes(
    target.connectionOptions,
    target.namespace,
    quietLogger,
  );
  const worker = await createKeelWorker({
    // The demo runs without configuration (`config` is absent); its model is the scripted one.
    ...(config
      ? await keelOptionsFromConfig(config, { searchAttributes })
      : {
          // No key: a made-up one would count as a secret and be redacted wherever the demo's text has it.
          openai: createOpenAIClient({ apiKey: undefined, baseURL: demoModel!.url }),
          defaultModel: DEMO_MODEL,
          workspace: process.cwd(),
          workspaceProtect: workspaceProtectFromEnvironment(),
          searchAttributes,
        }),
    ...(target.dataDirectory === undefined ? {} : { dataDirectory: target.dataDirectory }),
    connection,
    namespace: target.namespace,
    taskQueue,
  });
  return { worker, connection };
}

/** Runs `session` while `worker` runs; a worker that fails first fails the command with its own error. */
export async function runHosting(worker: Worker, session: () => Promise<number>): Promise<number> {
  try {
    return await worker.runUntil(session);
  } catch (error) {
    if (!(error instanceof CombinedWorkerRunError)) throw error;
    // The session's own error here only says that it did not finish: the worker's error is the news.
    const { workerError } = error.cause;
    const reason = workerError instanceof Error ? workerError.message : String(workerError);
    throw new Error(`the worker this process hosted failed: ${reason}`, { cause: error });
  }
}

/** Only warnings and errors reach the terminal: they say what an operator must fix. */
const quietLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => void process.stderr.write(message + '\n'),
  error: (message: string) => void process.stderr.write(message + '\n'),
};
