import { DefaultLogger, Runtime } from '@temporalio/worker';

// Runs in every test process of the tiers with a server, before any worker exists. Expected failures
// (invalid inputs, failed attempts) log at WARN with stacks and worker lifecycle at INFO; keep test
// output to real errors. A process runs many test files one after another (isolate: false), and
// this file before each: the runtime is installed once per process.
const installed = Symbol.for('keel.test.runtimeInstalled');
const process = globalThis as { [installed]?: true };
if (process[installed] === undefined) {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  process[installed] = true;
}
