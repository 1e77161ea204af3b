import { loadClientConnectConfig } from '@temporalio/envconfig';
import { hostedRuntimeOptions } from '../telemetry/start-telemetry.js';
import { telemetryConfigFromEnvironment } from '../telemetry/telemetry-config.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { RunUpdateRefusedError } from '../client.js';
import type { KeelClient } from '../client.js';
import type { RunInputArgs } from '../contract/run-input.js';
import type { PendingApproval, RunState } from '../contract/run-state.js';
import { localServerRunning, resolveTarget } from './embedded.js';
import { followRun } from './follow.js';
import { HostedWorkerLog } from './hosted-worker-log.js';
import type { FollowOutcome } from './follow.js';
import { onInterrupt } from './interrupt.js';
import { connectClient, dataDirectory, EXIT, UsageError, workersPolling } from './io.js';
import type { Output } from './io.js';
import { LinePrompt } from './line-prompt.js';
import { hostWorkerFor, requireWorkerConfig, runHosting } from './run-command.js';
import { cutToWidth, plural, printable } from './terminal-text.js';

/** What `keel chat` was asked to do. */
export interface ChatCommandOptions {
  /** `keel chat <run id>`: an open session to continue. */
  resume: string | undefined;
  /** `--id`: the session's id; continued when it is open, else the new session takes it. */
  id: string | undefined;
  /** How a new session runs: everything `keel run` takes but the task, which is the first message. */
  input: Omit<RunInputArgs, 'task' | 'session'>;
  taskQueue: string;
}

const HELLO =
  'Type a message. /end or Ctrl-D ends the session; Ctrl-C while it works asks to cancel or detach, at an empty prompt leaves it open.';

/**
 * `keel chat`: a session run (`session: true`) to talk to: each line typed is a message, its answer
 * follows with the live status line, calls that wait for approval are asked inline. Hosts a worker
 * as `keel run` does when none serves the task queue.
 */
export async function chatCommand(out: Output, options: ChatCommandOptions): Promise<number> {
  if (out.json)
    throw new UsageError(
      'keel chat is interactive; for scripts use keel run --session and keel send --wait.',
    );
  if (options.resume !== undefined && options.id !== undefined)
    throw new UsageError('Give the session either as the argument or with --id, not both.');
  if (options.resume !== undefined && Object.keys(options.input).length > 0)
    throw new UsageError('Run options (--model, --tools, …) apply to a new session only.');
  const remote = loadClientConnectConfig().connectionOptions.address !== undefined;
  let config = !remote && !(await localServerRunning()) ? requireWorkerConfig() : undefined;
  // As in `keel run`: this process answers Ctrl-C itself, and a hosted worker's warnings go to a file.
  const workerLog = new HostedWorkerLog(dataDirectory());
  // The one runtime of this process, so the Prometheus endpoint (KEEL_METRICS_PROMETHEUS) is set here too.
  Runtime.install(hostedRuntimeOptions(telemetryConfigFromEnvironment(), workerLog.logger));
  const target = await resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: !remote });
  const client = await connectClient(target, options.taskQueue);
  const prompt = new LinePrompt();
  let hosted: { worker: Worker; connection: NativeConnection } | undefined;
  try {
    if (!remote && !(await workersPolling(client.keel))) {
      config ??= requireWorkerConfig();
      hosted = await hostWorkerFor(target, options.taskQueue, config, undefined);
    }
    const chat = new Chat(out, client.keel, prompt, options);
    return hosted ? await runHosting(hosted.worker, () => chat.run()) : await chat.run();
  } finally {
    prompt.close();
    if (workerLog.written && !process.env.KEEL_DEBUG)
      out.note(`The hosted worker's warnings are in ${workerLog.file} (KEEL_DEBUG=1 shows them here).`);
    await client.close();
    await hosted?.connection.close();
    await target.embedded?.stop();
  }
}

/** One conversation: the prompt loop, following each answer, the inline approvals. */
class Chat {
  #runId: string | undefined;
  #started = false;

  constructor(
    readonly out: Output,
    readonly keel: KeelClient,
    readonly prompt: LinePrompt,
    readonly options: ChatCommandOptions,
  ) {
    this.#runId = options.resume ?? options.id;
  }

  async run(): Promise<number> {
    if (this.#runId !== undefined) {
      const state = await this.#openSession(this.#runId);
      if (state !== undefined) {
        this.#started = true;
        this.out.note(
          `Continuing session ${this.#runId} (${plural(state.answers, 'answer')} so far). ${HELLO}`,
        );
        if (state.phase !== 'idle') {
          const outcome = await this.#follow(state.answers + 1, state);
          if (outcome.kind !== 'answered') return this.#ended(outcome);
        }
      }
    }
    if (!this.#started) this.out.note(`New session. ${HELLO}`);
    for (;;) {
      const answer = await this.prompt.ask('you> ', { remember: true });
      if (answer.kind === 'interrupt') {
        if (this.#started)
          this.out.note(`Left session ${this.#runId} open: \`keel chat ${this.#runId}\` to come back.`);
        return EXIT.ok;
      }
      const text = answer.kind === 'line' ? answer.text.trim() : '/end';
      if (text === '') continue;
      if (text === '/end') return this.#started ? this.#end() : EXIT.ok;
      if (text === '/help') {
        this.out.line(HELLO);
        continue;
      }
      const outcome = await this.#send(text);
      if (outcome.kind !== 'answered') return this.#ended(outcome);
      this.out.line('');
    }
  }

  /** The open session `runId`, undefined when `--id` names no run yet; else a clear error. */
  async #openSession(runId: string): Promise<RunState | undefined> {
    let status: string;
    try {
      status = (await this.keel.temporal.workflow.getHandle(runId).describe()).status.name;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      if (this.options.resume === undefined) return undefined;
      throw new RunUpdateRefusedError(`There is no run ${runId}.`);
    }
    if (status !== 'RUNNING')
      throw new RunUpdateRefusedError(
        `Run ${runId} has ended (${status}): \`keel result ${runId}\` shows how; \`keel chat\` starts a new session.`,
      );
    return this.keel.getRunState(runId);
  }

  /** Starts the session with `text` as its task, or gives it `text` as the next message, and follows to the answer. */
  async #send(text: string): Promise<FollowOutcome> {
    if (!this.#started) {
      this.#runId = await this.keel.startRun(
        { ...this.options.input, task: text, session: true },
        this.#runId !== undefined ? { runId: this.#runId } : {},
      );
      this.#started = true;
      this.out.note(`Session ${this.#runId} started.`);
      return this.#follow(1, undefined);
    }
    const before = await this.keel.getRunState(this.#runId!);
    await this.keel.sendMessage(this.#runId!, text);
    return this.#follow(before.answers + 1, before);
  }

  /** Ends the session and shows how it ended. */
  async #end(): Promise<number> {
    const before = await this.keel.getRunState(this.#runId!);
    await this.keel.endSession(this.#runId!);
    return this.#ended(await this.#follow(undefined, before, { summaryOnly: true }));
  }

  /** Follows the run to its next answer (or its end) with Ctrl-C asking to cancel or detach. */
  async #follow(
    untilAnswered: number | undefined,
    before: RunState | undefined,
    extra: { summaryOnly?: boolean } = {},
  ): Promise<FollowOutcome> {
    const runId = this.#runId!;
    const controller = new AbortController();
    const stopAsking = onInterrupt(
      this.out,
      async () => {
        await this.keel.cancelRun(runId);
        this.out.note('Cancelling…');
      },
      () => controller.abort(),
    );
    try {
      return await followRun(this.keel, runId, {
        progress: true,
        write: this.out.line,
        signal: controller.signal,
        afterSeq: before?.events.at(-1)?.seq ?? -1,
        since: Date.now(),
        sendHint: false,
        askApproval: (pending) => this.#approve(pending, controller),
        ...(untilAnswered === undefined ? {} : { untilAnswered }),
        ...extra,
      });
    } finally {
      stopAsking();
    }
  }

  /** Asks whether a waiting call may run: yes, no (with a reason for the model), or edit its arguments. */
  async #approve(pending: PendingApproval, controller: AbortController): Promise<void> {
    const runId = this.#runId!;
    // Detached (Ctrl-C, then d): the call keeps waiting for whoever comes back; nothing more to ask.
    while (!controller.signal.aborted) {
      const columns = process.stdout.columns > 0 ? process.stdout.columns : 80;
      const call = cutToWidth(callText(pending), Math.max(20, columns - 30));
      const answer = await this.prompt.ask(`Run ${call}? [y/n/e(dit)] `);
      if (controller.signal.aborted) return;
      if (answer.kind !== 'line') {
        // Leaving: the call keeps waiting for whoever comes back.
        controller.abort();
        return;
      }
      const choice = answer.text.trim().toLowerCase();
      try {
        if (choice === 'y' || choice === 'yes') {
          await this.keel.approveCall(runId, pending.callId);
          return;
        }
        if (choice === 'n' || choice === 'no') {
          const why = await this.prompt.ask('Why? (the model is told; Enter to skip) ');
          const reason = why.kind === 'line' && why.text.trim() !== '' ? why.text.trim() : undefined;
          await this.keel.rejectCall(runId, pending.callId, reason);
          return;
        }
        if (choice === 'e' || choice === 'edit') {
          const edited = await this.prompt.ask('arguments> ', { prefill: pending.argumentsPreview });
          if (edited.kind !== 'line') continue;
          const args = jsonObject(edited.text);
          if (typeof args === 'string') {
            this.out.note(args);
            continue;
          }
          await this.keel.approveCall(runId, pending.callId, { arguments: args });
          return;
        }
        this.out.note('Answer y to run it, n to reject it, e to edit its arguments first.');
      } catch (error) {
        if (!(error instanceof RunUpdateRefusedError)) throw error;
        this.out.note(`Refused: ${error.message}`);
        const state = await this.keel.getRunState(runId);
        if (!state.pendingApprovals.some((waiting) => waiting.callId === pending.callId)) return;
      }
    }
  }

  /** How the conversation ended, said, as an exit code. */
  #ended(outcome: FollowOutcome): number {
    const runId = this.#runId!;
    if (outcome.kind === 'detached') {
      this.out.note(`Detached; session ${runId} stays open: \`keel chat ${runId}\` to come back.`);
      return EXIT.ok;
    }
    if (outcome.kind === 'answered') return EXIT.ok;
    return outcome.kind === 'ended' && outcome.result.status === 'completed' ? EXIT.ok : EXIT.notCompleted;
  }
}

/** `write_file(path="notes.txt", content="…")`: a call as a person reads it. */
export function callText(pending: PendingApproval): string {
  let args: unknown;
  try {
    args = JSON.parse(pending.argumentsPreview);
  } catch {
    // A long preview is cut, so not JSON any more: show it as it is.
    return `${printable(pending.name, { singleLine: true })}(${printable(pending.argumentsPreview, { singleLine: true })})`;
  }
  const fields =
    args !== null && typeof args === 'object' && !Array.isArray(args)
      ? Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`)
      : [JSON.stringify(args)];
  return printable(`${pending.name}(${fields.join(', ')})`, { singleLine: true });
}

/** The edited arguments as an object, or what is wrong with them. */
function jsonObject(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `Not JSON: ${(error as Error).message}`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'The arguments must be a JSON object, e.g. {"path":"notes.txt"}';
  return value as Record<string, unknown>;
}
