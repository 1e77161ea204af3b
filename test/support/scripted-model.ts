// The scripted Responses API server ships with Keel (`keel/testing`, src/testing) so users can test
// their own tools and the demo can run without a model; tests import it from here, where every create
// request it receives is checked against OpenAI's published request schema.
import { ScriptedModel as ScriptedServer } from '../../src/testing/index.js';
import type { Script, ScriptedModelOptions } from '../../src/testing/index.js';
import { createResponseErrors, loadCreateResponseSchema } from './responses-schema.js';

export * from '../../src/testing/index.js';

/** Requests that did not match the schema since the last {@link takeSchemaViolations}. */
const violations: string[] = [];

/** The scripted model server; see {@link ScriptedServer}. */
export type ScriptedModel = ScriptedServer;

/**
 * Starts the scripted model with every create request validated against OpenAI's `CreateResponse`
 * schema: an invalid one is answered 400, fails `assertDone`, and fails the test (test/setup.ts).
 */
export const ScriptedModel = {
  start(script: Script, options: ScriptedModelOptions = {}): Promise<ScriptedServer> {
    loadCreateResponseSchema();
    return ScriptedServer.start(script, {
      validateRequest: (body) => {
        const problems = createResponseErrors(body);
        violations.push(...problems);
        return problems;
      },
      ...options,
    });
  },
};

/** The schema violations seen since the last call, and forgets them. */
export function takeSchemaViolations(): string[] {
  return violations.splice(0);
}
