/**
 * Eval figures for BENCHMARKS.md: `keel eval` (the built CLI, in its own process) over 100 recorded
 * runs, against the built worker in its own process with default settings; the wall time, the model
 * requests and tokens the eval spent, and that no tool ran. `npx tsx bench/eval.ts [--runs N]`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KeelClient } from '../src/client.js';
import { EvalReport } from '../src/eval/report.js';
import { reply, ScriptedModel } from '../src/testing/index.js';
import type { RecordedRequest, ScriptStep } from '../src/testing/index.js';
import { NOOP_TOOL } from './support/bench-model.js';
import { startDistWorker } from './support/dist-worker.js';
import { openEnvironment } from './support/environment.js';

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 100;
/** Every tenth case, the candidate answers in other words. */
const DIFFERS_EVERY = 10;

/**
 * Both models call the no-op tool twice, one turn each, then answer; the recorded model is
 * `bench-recorded`, the candidate `bench-candidate`. The case number is in the task.
 */
function policy(): (request: RecordedRequest) => ScriptStep {
  const origins: Array<{ task: number; turn: number }> = [];
  return (request) => {
    const previous = request.body.previous_response_id;
    const before = previous === undefined ? undefined : origins[Number(previous.replace('resp_', '')) - 1];
    const task = before?.task ?? Number(/case (\d+)/u.exec(JSON.stringify(request.body.input))?.[1]);
    const turn = before === undefined ? 0 : before.turn + 1;
    origins[request.index] = { task, turn };
    if (turn < 2) return reply.calls({ name: NOOP_TOOL, arguments: { size: 200 + turn } });
    const differs = request.body.model === 'bench-candidate' && task % DIFFERS_EVERY === 0;
    return reply.text(differs ? `Case ${task}: done, in other words.` : `Case ${task}: done.`);
  };
}

const environment = await openEnvironment({ kind: 'start', say: (line) => console.error(line) });
const model = await ScriptedModel.start(policy());
const { worker, taskQueue } = await startDistWorker({
  built: environment.built,
  address: environment.address,
  namespace: environment.namespace,
  modelUrl: model.url,
  directory: environment.directory,
});
try {
  const keel = new KeelClient(environment.client, taskQueue);
  const recordStarted = performance.now();
  const ids = await Promise.all(
    Array.from({ length: RUNS }, (_, index) =>
      keel.startRun({ task: `case ${index + 1}: do it`, model: 'bench-recorded' }),
    ),
  );
  await Promise.all(ids.map((id) => keel.waitForResult(id)));
  const recordMs = performance.now() - recordStarted;
  const recordedRequests = model.requests.length;

  const started = performance.now();
  const cli = spawn(
    process.execPath,
    [
      path.join(environment.built.root, 'dist', 'cli', 'keel.js'),
      ...['eval', '--query', 'KeelModel = "bench-recorded"', '--limit', String(RUNS)],
      ...['--model', 'bench-candidate', '--json', '--task-queue', taskQueue],
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: environment.address,
        TEMPORAL_NAMESPACE: environment.namespace,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  cli.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
  const evalMs = performance.now() - started;
  const report = EvalReport.parse(JSON.parse(stdout));
  const toolRuns = report.cases.reduce(
    (sum, entry) =>
      sum +
      entry.candidate.turns.reduce(
        (calls, turn) => calls + turn.calls.filter((call) => !call.answer).length,
        0,
      ),
    0,
  );
  console.log(`recorded ${RUNS} runs of 3 turns (2 no-op calls each) in ${Math.round(recordMs)} ms`);
  console.log(
    `keel eval over them (built CLI, concurrency 4): exit ${code}, ${Math.round(evalMs)} ms wall, ` +
      `${Math.round(evalMs / RUNS)} ms per case`,
  );
  console.log(
    `model requests: ${recordedRequests} recording, ${model.requests.length - recordedRequests} eval; ` +
      `tokens ${report.totals.tokens.before} recorded, ${report.totals.tokens.after} spent by the eval`,
  );
  console.log(
    `cases: ${report.totals.cases}, passed ${report.totals.passed}, failed ${report.totals.failed} ` +
      `(expected ${Math.floor(RUNS / DIFFERS_EVERY)}), calls without a recorded answer: ${toolRuns}`,
  );
} finally {
  await worker.stop();
  await model.close();
  await environment.close();
}
