import { ApplicationFailure } from '@temporalio/activity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { ACTIVITY_NAMES } from '../../src/contract/activity-names.js';
import type { WorkerProfile } from '../../src/contract/tool-info.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { bareWorker } from '../support/bare-worker.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A worker whose model activity (a plugin's own, say) fails for good with a failure type of its own. */
async function runWithFailingModel(failure: ApplicationFailure) {
  const profile: WorkerProfile = { tools: [], defaultModel: 'own-model' };
  const { worker, taskQueue } = await bareWorker(server, {
    [ACTIVITY_NAMES.describeWorker]: () => Promise.resolve(profile),
    [ACTIVITY_NAMES.callModel]: () => Promise.reject(failure),
  });
  const keel = new KeelClient(server.client, taskQueue);
  return worker.runUntil(async () => keel.waitForResult(await keel.startRun({ task: 'x' })));
}

describe('the failure type of a failed run', () => {
  it('is the catch-all KeelError.UnknownFailure for an activity failure type Keel does not know', async () => {
    const result = await runWithFailingModel(
      ApplicationFailure.create({
        type: 'Acme.OutOfWidgets',
        message: 'no widgets left',
        nonRetryable: true,
      }),
    );
    expect(result).toMatchObject({ status: 'failed', errorType: 'KeelError.UnknownFailure', turns: 1 });
    expect(result.status === 'failed' && result.reason).toBe(
      'The model turn failed: no widgets left (failure type Acme.OutOfWidgets)',
    );
  });

  it('stays the type itself for one of Keel’s own', async () => {
    const result = await runWithFailingModel(
      ApplicationFailure.create({
        type: 'ModelError.Authentication',
        message: 'bad key',
        nonRetryable: true,
      }),
    );
    expect(result).toMatchObject({
      status: 'failed',
      errorType: 'ModelError.Authentication',
      reason: 'bad key',
    });
  });
});
