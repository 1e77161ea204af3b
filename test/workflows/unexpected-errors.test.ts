import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_RUN_WORKFLOW } from '../../src/contract/defaults.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { settle } from '../support/settle.js';
import { bareWorker } from '../support/bare-worker.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('an unexpected error in workflow code', () => {
  it('fails the run as KeelError.Unexpected instead of retrying its workflow task for ever', async () => {
    // A worker of another version, whose profile this workflow cannot read: `tools` is not a list.
    const { worker, taskQueue } = await bareWorker(server, {
      'keel.describeWorker': () =>
        Promise.resolve({ tools: { read_file: true }, defaultModel: 'scripted-model' }),
    });
    const settled = await worker.runUntil(async () => {
      const workflowId = `unexpected-${randomUUID()}`;
      await server.client.workflow.start(AGENT_RUN_WORKFLOW, {
        taskQueue,
        workflowId,
        args: [{ task: 'x' }],
      });
      return settle(server.client, workflowId);
    });
    expect(settled).toMatchObject({
      status: 'FAILED',
      failureType: 'KeelError.Unexpected',
      failureNonRetryable: true,
    });
    expect(settled.failureMessage).toMatch(/^Keel's agentRun workflow failed unexpectedly \(TypeError: .*\)/);
  });
});
