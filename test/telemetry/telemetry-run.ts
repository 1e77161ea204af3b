import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { KeelClient } from '../../src/client.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { cliEnvironment, startCli } from '../support/cli.js';
import type { CliProcess } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { TEST_API_KEY, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Collector } from './collector.js';
import type { CollectedSpan } from './collector.js';

/** Text that must never reach a span unless content capture is on: the task, a file read, the answer. */
export const MARKERS = {
  task: 'TASK-MARKER-7f3a: summarise notes.txt',
  file: 'FILE-MARKER-c41d',
  answer: 'ANSWER-MARKER-92be',
} as const;

/** The model the run asks for, priced so that its cost is a known number of micro-dollars. */
export const MODEL = 'scripted-model';

/** What one traced run left behind: the run's result, the spans the collector got, a metrics scrape. */
export interface TracedRun {
  runId: string;
  result: RunResult;
  spans: CollectedSpan[];
  metrics: string;
  workerOutput: string;
}

/**
 * One real agent run on a real `keel worker` process exporting OTLP to a real collector: the model
 * (scripted, on loopback) reads a file that exists and one that does not, then answers. The worker's
 * Prometheus endpoint is scraped before it stops; the spans are read once worker and collector stop.
 */
export async function tracedRun(server: TestServer, extra: Record<string, string> = {}): Promise<TracedRun> {
  const collector = await Collector.start();
  const model = await ScriptedModel.start([
    reply.calls(
      { name: 'read_file', arguments: { path: 'notes.txt' } },
      { name: 'read_file', arguments: { path: 'missing.txt' } },
    ),
    reply.text(MARKERS.answer),
  ]);
  const workspace = await temporaryWorkspace();
  await writeFile(path.join(workspace, 'notes.txt'), `${MARKERS.file}\n`);
  const taskQueue = `keel-telemetry-${randomUUID()}`;
  const metricsPort = await freePort();
  let worker: CliProcess | undefined;
  try {
    worker = await startWorker({
      OPENAI_BASE_URL: model.url,
      KEEL_TASK_QUEUE: taskQueue,
      KEEL_WORKSPACE: workspace,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      KEEL_METRICS_PROMETHEUS: `127.0.0.1:${metricsPort}`,
      ...extra,
    });
    const keel = new KeelClient(server.client, taskQueue);
    const runId = await keel.startRun({ task: MARKERS.task });
    const result = await keel.waitForResult(runId);
    model.assertDone();
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    worker.child.kill('SIGTERM');
    await worker.exited;
    const spans = await collector.stop();
    return { runId, result, spans, metrics, workerOutput: worker.stdout + worker.stderr };
  } finally {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
    await collector.stop();
    await model.close();
  }
}

/**
 * A `keel worker` process on the test server with `settings` (the model, task queue, workspace and
 * telemetry settings), once it polls.
 */
export async function startWorker(
  settings: Record<string, string> & { KEEL_TASK_QUEUE: string; KEEL_WORKSPACE: string },
): Promise<CliProcess> {
  const worker = startCli(['worker'], {
    env: cliEnvironment({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      OPENAI_API_KEY: TEST_API_KEY,
      KEEL_MODEL: MODEL,
      KEEL_MODEL_PRICES: JSON.stringify({ [MODEL]: { input: 1, output: 2 } }),
      KEEL_STATE_DIR: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
      ...settings,
    }),
    cwd: settings.KEEL_WORKSPACE,
  });
  await worker.waitForOutput(`Keel worker on task queue "${settings.KEEL_TASK_QUEUE}"`);
  return worker;
}

/** The spans named `name`. */
export const named = (spans: CollectedSpan[], name: string): CollectedSpan[] =>
  spans.filter((span) => span.name === name);

/** Every attribute value of every span, as one text, to look for what must not be there. */
export const allAttributeText = (spans: CollectedSpan[]): string =>
  spans.map((span) => JSON.stringify(span.attributes)).join('\n');
