/**
 * `npx tsx scripts/telemetry/measure-overhead.ts [runs]`: what tracing costs a run. Starts a dev server
 * and the real collector (scripts/telemetry/collector.sh), then times runs of two model turns and one
 * tool call (scripted model on loopback) on an in-process worker, rounds alternating between tracing
 * off and tracing on (every span exported over OTLP/HTTP to the collector), and prints the figures.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { startDevServer } from '../../bench/support/environment.js';
import { KeelClient } from '../../src/client.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { workflowsPath } from '../../src/prebuilt-bundle.js';
import { startTracing } from '../../src/telemetry/tracing.js';
import { workflowInterceptorModules } from '../../src/telemetry/workflow-interceptor-modules.js';
import { reply, ScriptedModel } from '../../src/testing/index.js';
import { createKeelWorker } from '../../src/worker.js';
import { freePort } from '../../test/support/free-port.js';

const runsPerRound = Number(process.argv[2] ?? 15);
const rounds = 2;
const here = path.dirname(fileURLToPath(import.meta.url));
const silent = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

async function startCollector(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const binary = execFileSync('bash', [path.join(here, 'collector.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-otelcol-'));
  const port = await freePort();
  const config = path.join(directory, 'config.yaml');
  await writeFile(
    config,
    `receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:${port}"}}}}\n` +
      `exporters: {file: {path: "${path.join(directory, 'spans.jsonl')}"}}\n` +
      'service: {telemetry: {metrics: {level: none}}, pipelines: {traces: {receivers: [otlp], exporters: [file]}}}\n',
  );
  const child = spawn(binary, [`--config=${config}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('Everything is ready')) resolve();
    });
    child.once('exit', () => reject(new Error(`the collector exited:\n${text}`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const server = await startDevServer();
  const collector = await startCollector();
  const clientConnection = await Connection.connect({ address: server.address });
  const connection = await NativeConnection.connect({ address: server.address });
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: [...workflowInterceptorModules],
    logger: silent,
  });
  const workspace = await mkdtemp(path.join(tmpdir(), 'keel-overhead-'));
  await writeFile(path.join(workspace, 'notes.txt'), 'notes\n');
  const tracing = startTracing({
    tracesUrl: `${collector.endpoint}/v1/traces`,
    serviceName: 'keel-overhead',
  });
  const figures: Record<'off' | 'on', number[]> = { off: [], on: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const mode of ['off', 'on'] as const) {
        const script = Array.from({ length: runsPerRound }, () => [
          reply.calls({ name: 'read_file', arguments: { path: 'notes.txt' } }),
          reply.text('done'),
        ]).flat();
        const model = await ScriptedModel.start(script);
        const taskQueue = `keel-overhead-${randomUUID()}`;
        const worker = await createKeelWorker({
          connection,
          taskQueue,
          workflowBundle: { code },
          openai: createOpenAIClient({ apiKey: undefined, baseURL: model.url }),
          defaultModel: 'scripted-model',
          modelMode: 'foreground',
          workspace,
          telemetry: { captureContent: false, ...(mode === 'on' ? { tracing } : {}) },
        });
        const keel = new KeelClient(new Client({ connection: clientConnection }), taskQueue);
        await worker.runUntil(async () => {
          for (let index = 0; index < runsPerRound; index++) {
            const started = performance.now();
            const runId = await keel.startRun({ task: 'read notes.txt' });
            await keel.waitForResult(runId);
            figures[mode].push(performance.now() - started);
          }
        });
        await model.close();
      }
    }
  } finally {
    await tracing.shutdown();
    await connection.close();
    await clientConnection.close();
    await collector.stop();
    await server.stop();
  }
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    return { median, mean, p90: sorted[Math.floor(sorted.length * 0.9)]! };
  };
  const off = stats(figures.off);
  const on = stats(figures.on);
  console.log(
    `runs of 2 model turns + 1 tool call, ${figures.off.length} per mode, in-process worker, dev server:`,
  );
  for (const [mode, value] of [
    ['tracing off', off],
    ['tracing on ', on],
  ] as const) {
    console.log(
      `  ${mode}: median ${value.median.toFixed(1)} ms, mean ${value.mean.toFixed(1)} ms, p90 ${value.p90.toFixed(1)} ms`,
    );
  }
  console.log(
    `  overhead: median ${(on.median - off.median).toFixed(1)} ms (${(((on.median - off.median) / off.median) * 100).toFixed(1)} %)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
