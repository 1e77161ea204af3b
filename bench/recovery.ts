import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { WorkflowFailedError } from '@temporalio/client';
import { KeelClient } from '../src/client.js';
import { reply, ScriptedModel } from '../src/testing/index.js';
import type { RecordedRequest } from '../src/testing/index.js';
import { release, WorkerProcess } from '../test/support/process/control.js';
import type { BenchEnvironment } from './support/environment.js';
import { withKeelWorker } from './support/keel-worker.js';
import { probeTool } from './support/probe-tool.js';
import { distribution } from './support/stats.js';
import type { Distribution } from './support/stats.js';

/** Options of the recovery and cancellation benchmark. */
export interface RecoveryOptions {
  /** Worker kills per heartbeat timeout. */
  kills: number;
  /** Cancellations per heartbeat timeout. */
  cancels: number;
  /** Heartbeat timeouts (seconds) to measure with. */
  heartbeatTimeouts: number[];
}

/** Recovery after SIGKILL with one heartbeat timeout. */
export interface KillResult {
  heartbeatTimeoutSeconds: number;
  /** SIGKILL → the tool call running again on the standby worker (the heartbeat timeout + retry). */
  toolRestartedMs: Distribution;
  /** SIGKILL → the run's next model request (the run moving on: the retried call and the next workflow task). */
  runProgressedMs: Distribution;
  completed: number;
}

/** Cancellation with one heartbeat timeout. */
export interface CancelResult {
  heartbeatTimeoutSeconds: number;
  /** Cancel request → the tool's AbortSignal fired. */
  abortSignalMs: Distribution;
  /** Cancel request → the run's result reported Canceled. */
  runCanceledMs: Distribution;
}

/** What the recovery benchmark found. */
export interface RecoveryResult {
  options: RecoveryOptions;
  kills: KillResult[];
  cancels: CancelResult[];
}

/** Answers turn one with a call to `tool` labelled with the run's key, every later turn with text. */
function oneCallPolicy(tool: string, arrivals: Map<string, number>) {
  return (request: RecordedRequest) => {
    const chained = request.body.previous_response_id;
    if (chained !== undefined) {
      arrivals.set(chained, Date.now());
      return reply.text('done');
    }
    const label = /run (\S+):/.exec(JSON.stringify(request.body.input))?.[1] ?? 'unknown';
    return reply.calls({ name: tool, arguments: { label } });
  };
}

/**
 * Recovery and cancellation. Kills: two worker processes (the production `runWorker` with the test
 * tools), a run whose tool blocks; the worker running it gets SIGKILL and the standby takes over.
 * Cancels: an in-process worker whose probe tool waits for its AbortSignal.
 */
export async function benchRecovery(
  environment: BenchEnvironment,
  options: RecoveryOptions,
  say: (line: string) => void,
): Promise<RecoveryResult> {
  const kills: KillResult[] = [];
  for (const heartbeatTimeoutSeconds of options.heartbeatTimeouts) {
    kills.push(await measureKills(environment, heartbeatTimeoutSeconds, options.kills));
    say(`recovery: SIGKILL with heartbeat timeout ${heartbeatTimeoutSeconds} s measured`);
  }
  const cancels: CancelResult[] = [];
  for (const heartbeatTimeoutSeconds of options.heartbeatTimeouts) {
    cancels.push(await measureCancels(environment, heartbeatTimeoutSeconds, options.cancels));
    say(`recovery: cancel with heartbeat timeout ${heartbeatTimeoutSeconds} s measured`);
  }
  return { options, kills, cancels };
}

async function measureKills(
  environment: BenchEnvironment,
  heartbeatTimeoutSeconds: number,
  repetitions: number,
): Promise<KillResult> {
  const secondTurnAt = new Map<string, number>();
  const model = await ScriptedModel.start(oneCallPolicy('step', secondTurnAt));
  const taskQueue = `keel-bench-recovery-${heartbeatTimeoutSeconds}-${Date.now()}`;
  const workspace = await mkdtemp(path.join(environment.directory, 'recovery-workspace-'));
  const stateDirectory = await mkdtemp(path.join(environment.directory, 'recovery-state-'));
  const startWorker = () =>
    WorkerProcess.start({
      temporalAddress: environment.address,
      namespace: environment.namespace,
      taskQueue,
      modelUrl: model.url,
      apiKey: 'sk-bench',
      workspace,
      stateDirectory,
      bundlePath: environment.keelBundle.codePath,
    });
  const workers = await Promise.all([startWorker(), startWorker()]);
  const keel = new KeelClient(environment.client, taskQueue);
  const restarted: number[] = [];
  const progressed: number[] = [];
  let completed = 0;
  try {
    for (let repetition = 0; repetition < repetitions; repetition++) {
      const label = `kill-${heartbeatTimeoutSeconds}-${repetition}`;
      const runId = await keel.startRun({
        task: `Benchmark run ${label}: call step once.`,
        tools: ['step'],
        heartbeatTimeoutSeconds,
      });
      const started = await Promise.race(
        workers.map((worker) =>
          worker.waitFor((event) => event.type === 'tool-started' && event.label === label),
        ),
      );
      const victim = workers.find((worker) => worker.pid === started.pid)!;
      const survivor = workers.find((worker) => worker !== victim)!;
      await victim.kill();
      const killedAt = Date.now();
      // The victim is gone, so only the retry on the survivor can see the release and finish the call.
      await release(workspace, label);
      const resumed = await survivor.waitFor(
        (event) => event.type === 'tool-started' && event.label === label,
      );
      restarted.push(resumed.at - killedAt);
      const result = await keel.waitForResult(runId);
      if (result.status === 'completed') completed++;
      const responseId = model.requests.find((request) =>
        JSON.stringify(request.body.input).includes(`run ${label}:`),
      )?.index;
      const progressedAt = responseId === undefined ? undefined : secondTurnAt.get(`resp_${responseId + 1}`);
      if (progressedAt !== undefined) progressed.push(progressedAt - killedAt);
      workers.splice(workers.indexOf(victim), 1, await startWorker());
    }
  } finally {
    await Promise.all(workers.map((worker) => worker.kill()));
    await model.close();
  }
  return {
    heartbeatTimeoutSeconds,
    toolRestartedMs: distribution(restarted, 0),
    runProgressedMs: distribution(progressed, 0),
    completed,
  };
}

async function measureCancels(
  environment: BenchEnvironment,
  heartbeatTimeoutSeconds: number,
  repetitions: number,
): Promise<CancelResult> {
  const model = await ScriptedModel.start(oneCallPolicy('probe', new Map()));
  const probe = probeTool();
  const abortSignal: number[] = [];
  const runCanceled: number[] = [];
  try {
    await withKeelWorker(environment, { modelUrl: model.url, tools: [probe.tool] }, async ({ keel }) => {
      for (let repetition = 0; repetition < repetitions; repetition++) {
        const label = `cancel-${heartbeatTimeoutSeconds}-${repetition}`;
        const runId = await keel.startRun({
          task: `Benchmark run ${label}: call probe once.`,
          tools: ['probe'],
          heartbeatTimeoutSeconds,
        });
        const record = probe.record(label);
        await record.started;
        const requestedAt = performance.now();
        await keel.cancelRun(runId);
        await record.aborted;
        abortSignal.push((record.abortedAt ?? Number.NaN) - requestedAt);
        const outcome = await keel.waitForResult(runId).then(
          () => 'completed',
          (error: unknown) => (error instanceof WorkflowFailedError ? 'canceled' : 'error'),
        );
        if (outcome === 'canceled') runCanceled.push(performance.now() - requestedAt);
      }
    });
  } finally {
    await model.close();
  }
  return {
    heartbeatTimeoutSeconds,
    abortSignalMs: distribution(abortSignal, 0),
    runCanceledMs: distribution(runCanceled, 0),
  };
}

/** One line per heartbeat timeout, for the summary. */
export function summarizeRecovery(result: RecoveryResult): string[] {
  return [
    ...result.kills.map(
      (entry) =>
        `  SIGKILL, heartbeat timeout ${entry.heartbeatTimeoutSeconds} s: tool running again after median ` +
        `${entry.toolRestartedMs.median} ms (max ${entry.toolRestartedMs.max}), run's next model turn after median ` +
        `${entry.runProgressedMs.median} ms (max ${entry.runProgressedMs.max}); ${entry.completed}/${entry.toolRestartedMs.count} completed`,
    ),
    ...result.cancels.map(
      (entry) =>
        `  cancel, heartbeat timeout ${entry.heartbeatTimeoutSeconds} s: AbortSignal after median ${entry.abortSignalMs.median} ms ` +
        `(max ${entry.abortSignalMs.max}), run Canceled after median ${entry.runCanceledMs.median} ms`,
    ),
  ];
}
