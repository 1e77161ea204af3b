/**
 * A Keel worker in its own process, for tests that kill, stop or restart workers. It runs the
 * production path (`runWorker` with the environment configuration) plus the test tools, and reports
 * what happens on stdout as KEEL-EVENT lines.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { workerConfigFromEnvironment } from '../../../src/config.js';
import { fileTools } from '../../../src/tools/builtin/file-tools.js';
import { runWorker } from '../../../src/worker.js';
import { emit } from './events.js';
import { processTools } from './tools.js';

Runtime.install({ logger: new DefaultLogger('WARN') });

// The SDK's runtime handles SIGTERM (graceful shutdown); this listener only tells the test it arrived.
process.on('SIGTERM', () => emit('sigterm-received'));

const bundlePath = process.env.KEEL_TEST_BUNDLE;
const maxActivities = process.env.KEEL_TEST_MAX_ACTIVITIES;
const config = workerConfigFromEnvironment();
await runWorker(config, {
  // With a workspace per run, each run gets the file tools too, and keeps its release marks there.
  tools: config.runWorkspaces
    ? (workspace) => [...fileTools(workspace), ...processTools(workspace.root)]
    : processTools(config.workspace),
  ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : {}),
  ...(maxActivities ? { workerOptions: { maxConcurrentActivityTaskExecutions: Number(maxActivities) } } : {}),
  onReady: () => emit('worker-ready'),
});
emit('worker-stopped');
