// Copied into the packed-package test's project beside the example: one name from every entry point,
// compiled against the installed declarations and run, so each export resolves with types and at run time.
import { defineTool } from 'keel';
import { KeelClient, RunInput } from 'keel/client';
import { reply, ScriptedModel } from 'keel/testing';
import { agentRun, stateQuery } from 'keel/workflow';

const model = await ScriptedModel.start([reply.text('unused')]);
const listening = model.url.startsWith('http://127.0.0.1:');
await model.close();
console.log(
  JSON.stringify({
    defineTool: typeof defineTool,
    KeelClient: typeof KeelClient,
    RunInput: RunInput.safeParse({ task: 'check' }).success,
    ScriptedModel: listening,
    agentRun: typeof agentRun,
    stateQuery: stateQuery.name,
  }),
);
