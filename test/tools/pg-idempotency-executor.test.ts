import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { executeToolCall } from '../../src/tools/executor.js';
import type { ExecuteRequest } from '../../src/tools/executor.js';
import { PostgresIdempotencyStore } from '../../src/tools/pg-idempotency-store.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { RecordingLogger } from '../support/loggers.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';

let server: Postgres;
let store: PostgresIdempotencyStore;

beforeAll(async () => {
  server = await startPostgres();
  store = new PostgresIdempotencyStore({ url: server.url() });
});
afterAll(async () => {
  await store.close();
  await server.close();
});

/** A `charge` tool whose effect runs `during` and counts its runs. */
function charging(during: () => Promise<void> = () => Promise.resolve()) {
  const runs = { count: 0 };
  const tool = defineTool({
    name: 'charge',
    description: 'Charge once.',
    schema: z.object({}),
    execute: (_input, context) =>
      context.once('charge', async () => {
        runs.count += 1;
        await during();
        return { receipt: `r-${runs.count}` };
      }),
  });
  const logger = new RecordingLogger();
  const dependencies = {
    registry: new ToolRegistry([tool]),
    sanitizer: createSanitizer({ secrets: [] }),
    logger,
    idempotencyStore: store,
  };
  return { runs, logger, dependencies };
}

function request(callId: string): ExecuteRequest {
  return {
    call: { callId, name: 'charge', argumentsJson: '{}' },
    idempotencyKey: `run-1:${callId}`,
    outputCharLimit: 1_000,
  };
}

describe('a tool call whose side-effect store is PostgreSQL', () => {
  it('fails as an internal error, its effect not run, while PostgreSQL is down', async () => {
    const { runs, logger, dependencies } = charging();
    await store.open();
    await server.stop();
    try {
      expect(await executeToolCall(request('call_1'), dependencies)).toMatchObject({
        ok: false,
        error: 'tool_error',
        message: expect.stringMatching(/internal error \(reference call_1\)/u) as unknown,
      });
    } finally {
      await server.start();
    }
    expect(runs.count).toBe(0);
    expect(logger.entries.map((entry) => entry.message)).toEqual(['Tool charge failed']);
    expect(await executeToolCall(request('call_1'), dependencies)).toMatchObject({ ok: true });
    expect(runs.count).toBe(1);
  });

  it("gives the model the effect's result when PostgreSQL goes down before it is recorded; a retry is refused", async () => {
    const { runs, logger, dependencies } = charging(() => server.stop());
    try {
      expect(await executeToolCall(request('call_2'), dependencies)).toEqual({
        callId: 'call_2',
        ok: true,
        output: JSON.stringify({ receipt: 'r-1' }),
      });
    } finally {
      await server.start();
    }
    expect(logger.entries.map((entry) => entry.message)).toEqual([
      'The side-effect store failed after charge ran; a retry of this call will be refused as in doubt',
    ]);
    expect(await executeToolCall(request('call_2'), dependencies)).toMatchObject({
      ok: false,
      error: 'tool_error',
      message: expect.stringMatching(/may or may not have happened/u) as unknown,
    });
    expect(runs.count).toBe(1);
  });
});
