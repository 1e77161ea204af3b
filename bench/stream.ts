/**
 * Streaming figures for BENCHMARKS.md: time to first token through Keel (the built worker in its own
 * process, default settings) against the scripted model called directly through the `openai` SDK,
 * the text events the caller got, and the history bytes streaming adds per turn: its signals and
 * updates, which since issue 24 (text out of band, from the worker's live hub) should be none, and
 * the run's whole history. `npx tsx bench/stream.ts [--runs N]`; prints numbers.
 */
import { performance } from 'node:perf_hooks';
import proto from '@temporalio/proto';
import { KeelClient } from '../src/client.js';
import { STREAM_NAMES } from '../src/contract/stream-event.js';
import { createOpenAIClient } from '../src/model/client.js';
import { reply, ScriptedModel } from '../src/testing/index.js';
import { startDistWorker } from './support/dist-worker.js';
import { openEnvironment } from './support/environment.js';
import { distribution } from './support/stats.js';

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 10;
/** One turn's text: 200 words, about 1.3 KB, 200 deltas. */
const TEXT = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');

const environment = await openEnvironment({ kind: 'start', say: (line) => console.error(line) });
// A model writing a delta every 10 ms: a 2 s turn, as a real model streams.
const DELTA_MS = 10;
const model = await ScriptedModel.start(() => reply.streamed(reply.text(TEXT), { deltaMs: DELTA_MS }));
const { worker, taskQueue } = await startDistWorker({
  built: environment.built,
  address: environment.address,
  namespace: environment.namespace,
  modelUrl: model.url,
  directory: environment.directory,
});
try {
  const openai = createOpenAIClient({ apiKey: 'sk-bench', baseURL: model.url });
  const direct: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const events = await openai.responses.create({ model: 'bench-model', input: 'say it', stream: true });
    let first: number | undefined;
    for await (const event of events) {
      if (event.type === 'response.output_text.delta') first ??= performance.now() - started;
    }
    direct.push(first ?? Number.NaN);
  }

  const keel = new KeelClient(environment.client, taskQueue);
  const throughKeel: number[] = [];
  const streamingBytes: number[] = [];
  const historyEvents: number[] = [];
  const historyBytes: number[] = [];
  const textEvents: number[] = [];
  const textChars: number[] = [];
  const runTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const runId = await keel.startRun({ task: 'say it' });
    let first: number | undefined;
    let texts = 0;
    let chars = 0;
    for await (const { event } of keel.stream(runId)) {
      if (event.type === 'text') {
        first ??= performance.now() - started;
        texts += 1;
        chars += event.delta.length;
      }
    }
    await keel.waitForResult(runId);
    runTimes.push(performance.now() - started);
    throughKeel.push(first ?? Number.NaN);
    textEvents.push(texts);
    textChars.push(chars);
    const history = await keel.temporal.workflow.getHandle(runId).fetchHistory();
    const encoded = (event: proto.temporal.api.history.v1.IHistoryEvent): number =>
      proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    historyEvents.push(history.events?.length ?? 0);
    historyBytes.push((history.events ?? []).reduce((sum, event) => sum + encoded(event), 0));
    const bytes = (history.events ?? [])
      .filter(
        (event) =>
          event.workflowExecutionSignaledEventAttributes?.signalName === STREAM_NAMES.publish ||
          Boolean(event.workflowExecutionUpdateAcceptedEventAttributes) ||
          Boolean(event.workflowExecutionUpdateCompletedEventAttributes),
      )
      .reduce((sum, event) => sum + encoded(event), 0);
    streamingBytes.push(bytes);
  }
  console.log(`runs: ${RUNS}, one turn of ${TEXT.length} characters in 200 deltas, one every ${DELTA_MS} ms`);
  console.log('time to first token, direct (ms):', JSON.stringify(distribution(direct)));
  console.log(
    'time to first token through Keel, from startRun (ms):',
    JSON.stringify(distribution(throughKeel)),
  );
  console.log('whole run through Keel, startRun to result (ms):', JSON.stringify(distribution(runTimes)));
  console.log('text events the caller got per turn:', JSON.stringify(distribution(textEvents)));
  console.log('characters of text the caller got per turn:', JSON.stringify(distribution(textChars, 0)));
  console.log(
    'history bytes of stream signals and updates per turn:',
    JSON.stringify(distribution(streamingBytes, 0)),
  );
  console.log('history of the 1-turn run, events:', JSON.stringify(distribution(historyEvents, 0)));
  console.log('history of the 1-turn run, bytes:', JSON.stringify(distribution(historyBytes, 0)));
} finally {
  await worker.stop();
  await model.close();
  await environment.close();
}
