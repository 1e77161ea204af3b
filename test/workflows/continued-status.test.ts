import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keelStatus } from '../../src/workflows/search-attributes.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { executionChain } from '../support/run-state.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

/** A row of `keel list --json`. */
interface Listed {
  runId: string;
  status: string;
  keelStatus: string | null;
  turns: number | null;
}

describe('a run that continues as new', () => {
  it('says `continued` on every earlier execution, and keel list shows it once', async () => {
    await withScenario(
      server,
      [
        reply.calls({ name: 'echo', arguments: { text: '1' } }),
        reply.calls({ name: 'echo', arguments: { text: '2' } }),
        reply.text('done'),
      ],
      { tools: [echoTool] },
      async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'echo twice', continueAsNewAfterTurns: 1 });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', turns: 3 });

        const chain = await executionChain(server.client, runId);
        expect(chain).toHaveLength(3);
        const statuses = [];
        for (const execution of chain) {
          const description = await server.client.workflow.getHandle(runId, execution.runId).describe();
          statuses.push([description.status.name, description.typedSearchAttributes.get(keelStatus)]);
        }
        expect(statuses).toEqual([
          ['CONTINUED_AS_NEW', 'continued'],
          ['CONTINUED_AS_NEW', 'continued'],
          ['COMPLETED', 'completed'],
        ]);
        // Each later execution starts as `running`, not with the `continued` of the one before it.
        for (const execution of chain.slice(1)) {
          const started = execution.events[0]?.workflowExecutionStartedEventAttributes;
          const status = started?.searchAttributes?.indexedFields?.KeelStatus?.data;
          expect(status && JSON.parse(Buffer.from(status).toString('utf8'))).toBe('running');
        }

        const list = async (query: string): Promise<Listed[]> => {
          const listed = await runCli(['list', '--json', '--query', query, '--task-queue', taskQueue], {
            env: environment,
          });
          expect(listed.code, listed.stderr).toBe(0);
          return JSON.parse(listed.stdout) as Listed[];
        };
        // Visibility is eventually consistent: ask until the last execution shows how the run ended.
        let listed: Listed[] = [];
        while (!listed.some((row) => row.keelStatus === 'completed'))
          listed = await list(`WorkflowId = "${runId}"`);
        expect(listed).toEqual([
          expect.objectContaining({ runId, status: 'COMPLETED', keelStatus: 'completed', turns: 3 }),
        ]);
        // A user's query narrows the runs; it never brings the continued executions back.
        // (It is put in parentheses: an OR in it must not undo the filter before it.)
        expect(await list(`WorkflowId = "${runId}" OR KeelStatus = "continued"`)).toEqual([
          expect.objectContaining({ runId, keelStatus: 'completed' }),
        ]);
      },
    );
  });
});
