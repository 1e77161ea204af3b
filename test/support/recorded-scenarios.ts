import type { RunInputArgs } from '../../src/contract/run-input.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { readFile } from '../../src/tools/builtin/index.js';
import { reply } from './scripted-model.js';
import type { ScriptStep } from './scripted-model.js';
import { addTool, blockingTool, echoTool } from './test-tools.js';

/** A run recorded into `test/fixtures/histories/<name>.json` and replayed against the current workflow. */
export interface RecordedScenario {
  name: string;
  input: RunInputArgs;
  steps: ScriptStep[];
  tools: () => { tools: Tool[]; started?: Promise<unknown>; release?: () => void };
  /** Files to put in the workspace before the run. */
  files?: Record<string, string>;
  /** Cancel the run once the tool has started. */
  cancel?: boolean;
  /** Stop the worker once the tool has started, release the tool, and finish on a new worker. */
  restartWorker?: boolean;
}

/** Every workflow path worth guarding against non-deterministic changes. */
export const recordedScenarios: RecordedScenario[] = [
  {
    name: 'completed-with-tool',
    input: { task: 'What do the notes say?', instructions: 'Be brief.' },
    files: { 'notes.txt': 'hello\n' },
    steps: [
      reply.calls({ name: 'read_file', arguments: { path: 'notes.txt', startLine: null, endLine: null } }),
      reply.text('Hello.'),
    ],
    tools: () => ({ tools: [readFile] }),
  },
  {
    name: 'tool-errors-then-fixed',
    input: { task: 'Add 1 and 2' },
    steps: [
      reply.calls(
        { name: 'subtract', arguments: {} },
        { name: 'add', arguments: '{"a": 1,' },
        { name: 'add', arguments: { a: 'one', b: 2 } },
      ),
      reply.calls({ name: 'add', arguments: { a: 1, b: 2, note: null } }),
      reply.text('3'),
    ],
    tools: () => ({ tools: [addTool] }),
  },
  {
    name: 'parallel-read-only-calls',
    input: { task: 'Echo twice', parallelToolCalls: true },
    steps: [
      reply.calls({ name: 'echo', arguments: { text: 'a' } }, { name: 'echo', arguments: { text: 'b' } }),
      reply.text('ab'),
    ],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'max-turns',
    input: { task: 'Loop', maxTurns: 2 },
    steps: [
      reply.calls({ name: 'echo', arguments: { text: '1' } }),
      reply.calls({ name: 'echo', arguments: { text: '2' } }),
    ],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'incomplete-output',
    input: { task: 'Write a lot', maxOutputTokens: 32 },
    steps: [
      reply.items([{ call: { name: 'echo', arguments: '{"text": "cut' } }], { status: 'incomplete' }),
      reply.items([{ text: 'Part of an' }], { status: 'incomplete' }),
    ],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'model-rate-limited-then-ok',
    input: { task: 'Hurry' },
    steps: [reply.error(429, 'Rate limit reached', { headers: { 'retry-after': '1' } }), reply.text('done')],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'model-failed-401',
    input: { task: 'Anything' },
    steps: [reply.error(401, 'Incorrect API key provided')],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'cancelled-mid-tool',
    input: { task: 'Block', heartbeatTimeoutSeconds: 2 },
    steps: [reply.calls({ name: 'block', arguments: { label: 'x' } })],
    tools: () => {
      const blocking = blockingTool();
      return { tools: [blocking.tool], started: blocking.started.promise };
    },
    cancel: true,
  },
  {
    name: 'crash-recovered',
    input: { task: 'Survive', heartbeatTimeoutSeconds: 2 },
    steps: [reply.calls({ name: 'block', arguments: { label: 'y' } }), reply.text('survived')],
    tools: () => {
      const blocking = blockingTool();
      return {
        tools: [blocking.tool],
        started: blocking.started.promise,
        release: () => blocking.release.resolve('released'),
      };
    },
    restartWorker: true,
  },
];
