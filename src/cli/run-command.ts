import { randomUUID } from 'node:crypto';
import { hostedRuntimeOptions } from '../telemetry/start-telemetry.js';
import { telemetryConfigFromEnvironment } from '../telemetry/telemetry-config.js';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { CombinedWorkerRunError, NativeConnection, Runtime } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { workerConfigFromEnvironment, workspaceProtectFromEnvironment } from '../config.js';
import type { WorkerConfig } from '../config.js';
import { ConfigError } from '../config-error.js';
import { codecKeysFromEnvironment } from '../codec/codec-config.js';
import { dataConverterFor } from '../data-converter.js';
import type { KeelClient } from '../client.js';
import type { RunInputArgs } from '../contract/run-input.js';
import { shorten } from '../contract/text.js';
import { createOpenAIClient } from '../model/client.js';
import { registerSearchAttributes } from '../search-attributes-setup.js';
import { openPayloadStore } from '../payload-store/open-payload-store.js';
import type { ScriptedModel } from '../testing/scripted-model.js';
import { checkRunCommandSandbox, createKeelWorker, keelOptionsFromConfig } from '../worker.js';
import { DEMO_MODEL, startDemoModel } from './demo.js';
import { localServerRunning, resolveTarget } from './embedded.js';
import type { TemporalTarget } from './embedded.js';
import { followRun } from './follow.js';
import { endingData, endingOf, formatEnding } from './ended-run.js';
import { existingRun } from './existing-run.js';
import { HostedWorkerLog } from './hosted-worker-log.js';
import type { ExistingRun } from './existing-run.js';
import { formatResult } from './format.js';
import { onInterrupt } from './interrupt.js';
import { CliFailure, connectClient, dataDirectory, EXIT, UsageError, workersPolling } from './io.js';
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
  if (options.demo && options.detach)
    throw new UsageError(
      "--demo cannot --detach: the demo's scripted model and the worker that runs it live in this process, so a detached demo run would never go on. Run it without --detach (Ctrl-C then asks whether to cancel it).",
    );
  const remote = loadClientConnectConfig().connectionOptions.address !== undefined;
  // A local server that is not running yet will be started here, and then only this process can
  // host the worker: check its configuration before starting anything.
  let config = !options.demo && !remote && !(await localServerRunning()) ? requireWorkerConfig() : undefined;
  // Before anything creates the SDK's runtime (starting the local server does): this process answers
  // Ctrl-C itself (cancel or detach), so a worker it hosts must not shut down on it, and the worker's
  // lifecycle chatter would drown the progress lines: warnings and errors only, and those to a file
  // (the run's own failure line says what happened).
  const workerLog = new HostedWorkerLog(dataDirectory());
  // The one runtime of this process, so the Prometheus endpoint (KEEL_METRICS_PROMETHEUS) is set here too.
  Runtime.install(hostedRuntimeOptions(telemetryConfigFromEnvironment(), workerLog.logger));
  const target = await resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: !remote });
  const taskQueue = options.demo ? `keel-demo-${randomUUID().slice(0, 8)}` : options.taskQueue;
  let demoModel: ScriptedModel | undefined;
  let hosted: { worker: Worker; connection: NativeConnection } | undefined;
  const client = await connectClient(target, taskQueue);
  try {
    // A run id names one run: a start with an id that is taken returns that run, so say which it is.
    const existing = options.runId ? await existingRun(client.keel, options.runId) : undefined;
    if (existing) {
      const shown = refuseOtherTask(existing, options);
      if (existing.ended) return await showEnded(out, client.keel, shown, existing);
    }
    // Host a worker for the demo, and locally when no worker (say, `keel worker`) serves the queue.
    const polled = !options.demo && (await workersPolling(client.keel));
    const hostWorker = options.demo || (!remote && !polled);
    // On a cluster nobody hosts a worker for us: the run waits for one, which is worth saying at once.
    const address = target.connectionOptions.address ?? 'localhost:7233';
    const noWorker =
      remote && !polled && !options.demo
        ? `No worker polls task queue "${taskQueue}" on ${address} (namespace ${target.namespace}): the run waits until one does. Start one with \`keel worker --task-queue ${taskQueue}\` against the same server.`
        : undefined;
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
        if (existing)
          out.note(
            `Run ${runId} was already running (started ${existing.description.startTime.toISOString()}); following it.`,
          );
        else out.note(`Run ${runId} started${options.demo ? ' with the scripted demo model' : ''}.`);
        if (target.uiUrl)
          out.note(`Watch it: ${target.uiUrl}/namespaces/${target.namespace}/workflows/${runId}`);
        if (noWorker) out.note(noWorker);
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
          if (options.demo)
            out.note(
              `The demo run cannot go on without this process (its scripted model and worker were here): \`keel cancel ${runId}\` ends it.`,
            );
          else if (hosted)
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
    if (workerLog.written && !process.env.KEEL_DEBUG)
      out.note(`The hosted worker's warnings are in ${workerLog.file} (KEEL_DEBUG=1 shows them here).`);
    await client.close();
    await hosted?.connection.close();
    await demoModel?.close();
    await target.embedded?.stop();
  }
}

/**
 * The id of a run that exists already, unless it was started with another task: a business key
 * that is reused for other work is a mistake to point out, not a run to replay.
 */
function refuseOtherTask(existing: ExistingRun, options: RunCommandOptions): string {
  const runId = existing.description.workflowId;
  if (existing.task !== undefined && existing.task.trim() !== options.input.task.trim()) {
    const status = existing.description.status.name;
    throw new CliFailure(
      'run-exists',
      `Run ${runId} already exists (${status}) with another task: ${JSON.stringify(shorten(existing.task, 120))}. ` +
        `A run id names one run, so nothing was started: give another --id for this task, or \`keel result ${runId}\` for that run.`,
      EXIT.error,
      { runId, status },
    );
  }
  return runId;
}

/** `keel run --id <id>` of a run that has ended: it is not run again; how it ended is the answer. */
async function showEnded(
  out: Output,
  keel: KeelClient,
  runId: string,
  existing: ExistingRun,
): Promise<number> {
  const ending = await endingOf(keel, runId);
  const status = existing.description.status.name;
  const closed = existing.description.closeTime?.toISOString() ?? 'earlier';
  out.note(
    `Run ${runId} already ran: it ended (${status}) at ${closed}. A run id names one run, so it was not started again; give another --id for a new run.`,
  );
  if (out.json) out.data({ runId, alreadyRan: true, status, ...endingData(ending) });
  else {
    const lines =
      ending.kind === 'result'
        ? formatResult(ending.result)
        : formatEnding(runId, existing.description, ending).slice(1);
    for (const line of lines) out.line(line);
  }
  return ending.kind === 'result' && ending.result.status === 'completed' ? EXIT.ok : EXIT.notCompleted;
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
    workerOptions: {
      dataConverter: dataConverterFor(
        config ? config.codec : codecKeysFromEnvironment(),
        (await openPayloadStore(config?.payloadStore)).dataConverter,
      ),
    },
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
