import { reply, ScriptedModel } from '../testing/index.js';
import type { RecordedRequest, ScriptStep } from '../testing/index.js';
import { plural } from './terminal-text.js';

/** Name the demo's answers carry, so nobody mistakes them for a real model's. */
export const DEMO_MODEL = 'keel-demo (scripted, not an AI)';

/** How long each demo turn "thinks", so the progress, the UI and Ctrl-C can be watched. */
const THINKING_MS = 1_200;

function thinking(step: ScriptStep): ScriptStep {
  return reply.held(step, new Promise((resolve) => setTimeout(resolve, THINKING_MS)));
}

/**
 * The demo's scripted model: it lists the workspace, reads the start of README.md if there is one,
 * and answers with what it saw. It exercises the whole pipeline (tools, observations, chaining,
 * the UI, cancellation) without a key, and says plainly that it is a script.
 */
function demoPolicy(request: RecordedRequest): ScriptStep {
  const [item] = request.body.input;
  if (request.body.previous_response_id === undefined) {
    return thinking(
      reply.items([
        { text: "I'll look at the workspace first." },
        { call: { name: 'list_directory', arguments: { path: '.', depth: 1 } } },
      ]),
    );
  }
  const output = typeof item?.output === 'string' ? item.output : '';
  if (request.index === 1) {
    const entries = output.split('\n').filter((line) => line.trim() !== '');
    if (entries.includes('README.md')) {
      return thinking(
        reply.items([
          {
            text: `The workspace has ${plural(entries.length, 'entry', 'entries')}; README.md should say what it is.`,
          },
          { call: { name: 'read_file', arguments: { path: 'README.md', startLine: 1, endLine: 12 } } },
        ]),
      );
    }
    return thinking(
      reply.text(answer(`The workspace has ${plural(entries.length, 'entry', 'entries')} and no README.md.`)),
    );
  }
  const firstLine = output.split('\n').find((line) => line.trim() !== '') ?? '(empty)';
  return thinking(reply.text(answer(`README.md begins: "${firstLine.trim()}".`)));
}

function answer(finding: string): string {
  return `${finding}\n\nThis answer came from Keel's scripted demo model, not from an AI: set OPENAI_API_KEY to run a real one.`;
}

/** Starts the demo model on loopback; its URL goes where OPENAI_BASE_URL would. */
export function startDemoModel(): Promise<ScriptedModel> {
  return ScriptedModel.start(demoPolicy);
}
