// `keel/testing`: a scripted Responses API server on loopback, for testing your own tools and agents
// through the real `openai` SDK without a model. Runs on Node built-ins alone: no test framework needed.

/** The scripted Responses API server: answers from a script, records every request it receives. */
export { ScriptedModel } from './scripted-model.js';
/** Options for `ScriptedModel.start` (say, a request validator). */
export type { ScriptedModelOptions } from './scripted-model.js';
/** Builders for scripted steps: `reply.text`, `reply.calls`, `reply.items`, `reply.error`, `reply.held`, … */
export { reply } from './reply.js';
/** A function call, and an output item (text, reasoning or call), of a scripted response. */
export type { ScriptedCall, ScriptedItem } from './reply.js';
/** A script (steps in order, or a policy), its steps, and the ids and requests the server hands tests. */
export type {
  RecordedRequest,
  ResponseIds,
  ResponsesRequestBody,
  Script,
  ScriptPolicy,
  ScriptStep,
  StreamPlan,
} from './script.js';
