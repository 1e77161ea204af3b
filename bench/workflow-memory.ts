/**
 * Workflow memory per cached run: `npx tsx bench/workflow-memory.ts [--runs 200]`. Starts a dev
 * server, a Keel worker on the built workflow bundle (`npm run build` first) in `debugMode`, so that
 * workflows run on this process's heap instead of the SDK's workflow thread, and the scripted model;
 * then starts `--runs` session runs that answer once and wait for a message, and prints the heap
 * after garbage collection before and after, and the difference per run: what each idle run the
 * worker caches holds in workflow memory (its modules, its state, its handlers). BENCHMARKS.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { KeelClient } from '../src/client.js';
import { createOpenAIClient } from '../src/model/client.js';
import { reply } from '../src/testing/reply.js';
import { ScriptedModel } from '../src/testing/scripted-model.js';
import { fileTools } from '../src/tools/builtin/index.js';
import { createKeelWorker } from '../src/worker.js';
import { openEnvironment } from './support/environment.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number, not ${values.runs}`);

v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc') as () => void;
/** The heap in use after two full collections, in bytes. */
function heapAfterCollection(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

const scratch = await mkdtemp(path.join(tmpdir(), 'keel-workflow-memory-'));
const environment = await openEnvironment({ kind: 'start' });
const model = await ScriptedModel.start(() => reply.text('Done.'));
try {
  const taskQueue = `workflow-memory-${randomUUID()}`;
  const worker = await createKeelWorker({
    connection: environment.connection,
    taskQueue,
    workspace: await mkdtemp(path.join(scratch, 'workspace-')),
    stateDirectory: await mkdtemp(path.join(scratch, 'state-')),
    openai: createOpenAIClient({ apiKey: 'sk-bench', baseURL: model.url }),
    defaultModel: 'scripted-model',
    tools: fileTools,
    workflowBundle: environment.keelBundle,
    workerOptions: { debugMode: true, maxCachedWorkflows: runs + 100 },
  });
  const keel = new KeelClient(environment.client, taskQueue);
  await worker.runUntil(async () => {
    // One run first, so the bundle's shared code and the worker's own state are in the baseline.
    await waitUntilIdle(keel, [await keel.startRun({ task: 'warm up', session: true, stream: false })]);
    const before = heapAfterCollection();
    const started: string[] = [];
    for (let index = 0; index < runs; index += 1)
      started.push(await keel.startRun({ task: `task ${index}`, session: true, stream: false }));
    await waitUntilIdle(keel, started);
    const after = heapAfterCollection();
    const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
    console.log(
      `${runs} idle session runs: workflow heap ${mib(before)} → ${mib(after)} MiB, ` +
        `${Math.round((after - before) / runs / 1024)} KiB per cached run`,
    );
  });
} finally {
  await model.close();
  await environment.close();
  await rm(scratch, { recursive: true, force: true });
}

/** Waits until every run has answered and waits for a message (the worker then caches it idle). */
async function waitUntilIdle(keel: KeelClient, runIds: readonly string[]): Promise<void> {
  for (const runId of runIds) {
    for (;;) {
      if ((await keel.getRunState(runId)).phase === 'idle') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
