import { DefaultLogger, Runtime } from '@temporalio/worker';

// Runs in every test process of the tiers with a server, before any worker exists. Expected failures
// (invalid inputs, failed attempts) log at WARN with stacks and worker lifecycle at INFO; keep test
// output to real errors.
Runtime.install({ logger: new DefaultLogger('ERROR') });
