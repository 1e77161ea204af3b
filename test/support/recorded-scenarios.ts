import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunInputArgs } from '../../src/contract/run-input.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { createReadFileTool } from '../../src/tools/builtin/read-file.js';
import { reply } from './scripted-model.js';
import type { ScriptStep } from './scripted-model.js';
import type { KeelClient } from '../../src/client.js';
import type { TestWorkerOptions } from './harness.js';
import { waitForState } from './run-state.js';
import { addTool, blockingTool, deployTool, echoTool, localEchoTool } from './test-tools.js';

/** A run recorded into `test/fixtures/histories/<name>.json` and replayed against the current workflow. */
export interface RecordedScenario {
  name: string;
  input: RunInputArgs;
  steps: ScriptStep[];
  /** The worker's tools, made for the run's workspace directory. */
  tools: (workspace: string) => { tools: Tool[]; started?: Promise<unknown>; release?: () => void };
  /** Files to put in the workspace before the run. */
  files?: Record<string, string>;
  /** Cancel the run once the tool has started. */
  cancel?: boolean;
  /** Stop the worker once the tool has started, release the tool, and finish on a new worker. */
  restartWorker?: boolean;
  /** What a person or service does while the run goes on (approve, send, end a session). */
  interact?: (
    keel: KeelClient,
    runId: string,
    tools: { started?: Promise<unknown>; release?: () => void },
  ) => Promise<void>;
  /** For a run that continues as new: record its first execution instead of its last. */
  firstExecution?: boolean;
  /** The worker's configuration beyond its tools (budgets, prices). */
  worker?: Pick<TestWorkerOptions, 'budgets' | 'prices' | 'runWorkspaces'>;
}

/** Where the recorded runs with workspaces of their own keep them: one directory per recording. */
const runWorkspacesRoot = path.join(tmpdir(), `keel-recorded-runs-${process.pid}`);

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
    tools: (workspace) => ({ tools: [createReadFileTool({ root: workspace })] }),
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
  {
    name: 'approval-edited-then-rejected',
    input: { task: 'Deploy twice' },
    steps: [
      reply.calls(
        { name: 'deploy', arguments: { service: 'api', replicas: 9 } },
        { name: 'deploy', arguments: { service: 'db', replicas: 1 } },
      ),
      reply.text('One deployed.'),
    ],
    tools: () => ({ tools: [deployTool().tool] }),
    interact: async (keel, runId) => {
      await waitForState(keel, runId, (state) => state.pendingApprovals[0]?.callId === 'call_1_1');
      await keel.approveCall(runId, 'call_1_1', { arguments: { service: 'api', replicas: 2 } });
      await waitForState(keel, runId, (state) => state.pendingApprovals[0]?.callId === 'call_1_2');
      await keel.rejectCall(runId, 'call_1_2', 'not today');
    },
  },
  {
    name: 'approval-timed-out',
    input: { task: 'Deploy', approvalTimeoutSeconds: 1 },
    steps: [
      reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 1 } }),
      reply.text('No answer.'),
    ],
    tools: () => ({ tools: [deployTool().tool] }),
  },
  {
    name: 'message-mid-turn',
    input: { task: 'Block, then listen' },
    steps: [reply.calls({ name: 'block', arguments: { label: 'z' } }), reply.text('Heard you.')],
    tools: () => {
      const blocking = blockingTool();
      return {
        tools: [blocking.tool],
        started: blocking.started.promise,
        release: () => blocking.release.resolve('released'),
      };
    },
    interact: async (keel, runId, { started, release }) => {
      await started;
      await keel.sendMessage(runId, 'Also: be brief.');
      release?.();
    },
  },
  {
    name: 'session-message-then-end',
    input: { task: 'Say hello', session: true, idleTimeoutSeconds: 600 },
    steps: [reply.text('Hello!'), reply.text('A plan.')],
    tools: () => ({ tools: [echoTool] }),
    interact: async (keel, runId) => {
      await waitForState(keel, runId, (state) => state.phase === 'idle');
      await keel.sendMessage(runId, 'Make a plan.');
      await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 2);
      await keel.endSession(runId);
    },
  },
  {
    name: 'signals-delivered-and-refused',
    input: { task: 'Say hello', session: true, idleTimeoutSeconds: 600 },
    steps: [reply.text('Hello!'), reply.text('A plan.')],
    tools: () => ({ tools: [echoTool] }),
    interact: async (keel, runId) => {
      const handle = keel.temporal.workflow.getHandle(runId);
      await waitForState(keel, runId, (state) => state.phase === 'idle');
      await handle.signal('send', { text: '   ' });
      await handle.signal('sned', { text: 'a typo' });
      await handle.signal('send', { text: 'Make a plan.' });
      await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 2);
      await handle.signal('endSession');
    },
  },
  {
    name: 'approval-by-signal',
    input: { task: 'Deploy the api' },
    steps: [
      reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 2 } }),
      reply.text('Deployed.'),
    ],
    tools: () => ({ tools: [deployTool().tool] }),
    interact: async (keel, runId) => {
      const handle = keel.temporal.workflow.getHandle(runId);
      await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
      await handle.signal('approve', { callId: 'call_9_9' });
      await handle.signal('approve', { callId: 'call_1_1' });
    },
  },
  {
    // Edited arguments that leave the tool's optional fields out: taken since the approvals patch, as a
    // signal too (older histories replay the same signal as refused).
    name: 'approval-by-signal-omitting-optionals',
    input: { task: 'Read the notes', approvalTools: ['read_file'] },
    files: { 'notes.txt': 'asked\n', 'other.txt': 'chosen\n' },
    steps: [
      reply.calls({ name: 'read_file', arguments: { path: 'notes.txt', startLine: null, endLine: null } }),
      reply.text('Read.'),
    ],
    tools: (workspace) => ({ tools: [createReadFileTool({ root: workspace })] }),
    interact: async (keel, runId) => {
      const handle = keel.temporal.workflow.getHandle(runId);
      await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
      await handle.signal('approve', {
        callId: 'call_1_1',
        arguments: { path: 'other.txt', startLine: 'x' },
      });
      await handle.signal('approve', { callId: 'call_1_1', arguments: { path: 'other.txt' } });
    },
  },
  {
    name: 'budgets-max-tokens',
    input: { task: 'Spend', maxTotalTokens: 150, maxDurationSeconds: 600 },
    steps: [
      reply.calls({ name: 'echo', arguments: { text: '1' } }),
      reply.calls({ name: 'echo', arguments: { text: '2' } }),
    ],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'budgets-max-cost',
    input: { task: 'Spend money', maxCostUsd: 0.0001 },
    steps: [reply.calls({ name: 'echo', arguments: { text: '1' } })],
    tools: () => ({ tools: [echoTool] }),
    worker: { prices: { 'scripted-model': { input: 1, output: 1 } } },
  },
  {
    name: 'budgets-max-time-awaiting-approval',
    input: { task: 'Wait for a yes', approvalTools: ['echo'], maxDurationSeconds: 1 },
    steps: [reply.calls({ name: 'echo', arguments: { text: '1' } })],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'continued-as-new-first-execution',
    input: { task: 'Echo across executions', continueAsNewAfterTurns: 1 },
    steps: [reply.calls({ name: 'echo', arguments: { text: '1' } }), reply.text('done')],
    tools: () => ({ tools: [echoTool] }),
    firstExecution: true,
  },
  {
    name: 'continued-as-new-last-execution',
    input: { task: 'Echo across executions', continueAsNewAfterTurns: 1 },
    steps: [reply.calls({ name: 'echo', arguments: { text: '1' } }), reply.text('done')],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    name: 'local-tool',
    input: { task: 'Echo locally' },
    steps: [reply.calls({ name: 'echo', arguments: { text: 'x' } }), reply.text('done')],
    tools: () => ({ tools: [localEchoTool] }),
  },
  {
    name: 'stateless-conversation',
    input: { task: 'Echo statelessly', conversation: 'stateless' },
    steps: [
      reply.items([{ reasoning: 'think' }, { call: { name: 'echo', arguments: { text: 'x' } } }]),
      reply.text('done'),
    ],
    tools: () => ({ tools: [echoTool] }),
  },
  {
    // The worker keeps each run's workspace on its own disk: calls go to its own task queue.
    name: 'workspace-pinned',
    input: { task: 'Echo' },
    steps: [reply.calls({ name: 'echo', arguments: { text: 'pinned' } }), reply.text('pinned')],
    tools: () => ({ tools: [echoTool] }),
    worker: { runWorkspaces: { root: runWorkspacesRoot } },
  },
  {
    // The worker holding the workspace stops mid-call: nobody takes the retry from its queue, the
    // model is told the workspace is lost, and the run ends on another worker.
    name: 'workspace-lost',
    input: { task: 'Block', heartbeatTimeoutSeconds: 2 },
    steps: [reply.calls({ name: 'block', arguments: { label: 'w' } }), reply.text('lost it')],
    tools: () => {
      const blocking = blockingTool();
      return {
        tools: [blocking.tool],
        started: blocking.started.promise,
        release: () => blocking.release.resolve('released'),
      };
    },
    worker: { runWorkspaces: { root: runWorkspacesRoot, failoverSeconds: 1 } },
    restartWorker: true,
  },
];
