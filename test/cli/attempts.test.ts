import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { retryLines } from '../../src/cli/attempts.js';
import type { PendingActivity } from '../../src/cli/attempts.js';

const { TimeoutType } = proto.temporal.api.enums.v1;

const pending = (fields: Partial<PendingActivity>): PendingActivity => ({
  activityId: '7',
  activityType: { name: 'keel.callModel' },
  attempt: 1,
  ...fields,
});

describe('retryLines: what keel run and keel follow say of an attempt tried again', () => {
  it('says nothing of a first attempt, however long it runs', () => {
    expect(retryLines([pending({ attempt: 1 })], new Set())).toEqual([]);
  });

  it('names a timed-out model call and a tool call whose worker was lost, with the attempt of how many', () => {
    expect(
      retryLines(
        [
          pending({
            attempt: 2,
            maximumAttempts: 8,
            lastFailure: {
              message: 'activity StartToClose timeout',
              timeoutFailureInfo: { timeoutType: TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE },
            },
          }),
          pending({
            activityId: '9',
            activityType: { name: 'keel.executeTool' },
            attempt: 3,
            lastFailure: {
              message: 'activity Heartbeat timeout',
              timeoutFailureInfo: { timeoutType: TimeoutType.TIMEOUT_TYPE_HEARTBEAT },
            },
          }),
        ],
        new Set(),
      ),
    ).toEqual([
      '  ↻ the model call had no answer within its timeout; trying again (attempt 2 of 8)',
      '  ↻ a tool call lost its worker (no heartbeat); trying again (attempt 3)',
    ]);
  });

  it("says each attempt once, on one line however the server's reason is written, cut at 200 characters", () => {
    const said = new Set<string>();
    const failed = pending({
      attempt: 2,
      lastFailure: { message: `bad\n\u001b[31mgateway ${'x'.repeat(300)}` },
    });
    const [line] = retryLines([failed], said);
    expect(line).toMatch(/^ {2}↻ the model call failed: bad gateway x+…; trying again \(attempt 2\)$/u);
    expect(line!.length).toBeLessThan(280);
    expect(retryLines([failed], said)).toEqual([]);
    expect(retryLines([{ ...failed, attempt: 3 }], said)).toHaveLength(1);
  });
});
