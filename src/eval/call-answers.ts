import type { ModelRequest } from '../contract/model-request.js';
import { Observation, ObservationError, observationText } from '../contract/observation.js';
import type { RecordedAnswer } from '../contract/replay.js';
import { z } from 'zod';

/** A failed observation as `observationText` writes it for the model. */
const FailureText = z.strictObject({
  error: ObservationError,
  message: z.string(),
  preview: z.string().optional(),
});

/** A call's answer without its call id: what a replayed call with its own id gets. */
export function answerOfObservation(observation: Observation): RecordedAnswer {
  if (observation.ok) return { ok: true, output: observation.output };
  return {
    ok: false,
    error: observation.error,
    message: observation.message,
    ...(observation.preview !== undefined ? { preview: observation.preview } : {}),
  };
}

/**
 * The answers a run's calls got, gathered while its history is read. The model requests are the
 * source of truth: a chained run's next request carries the previous turn's observations, keyed by
 * the response whose calls they answer (call ids are the model's, so only unique per response); a
 * stateless run's carries the conversation, its `function_call_output` items as the model read
 * them. Tool activity results (in call order) answer the calls no later request told the model of.
 */
export class CallAnswers {
  readonly #observed = new Map<string, RecordedAnswer>();
  readonly #outputTexts = new Map<string, string>();
  readonly #toolResults = new Map<string, Observation>();

  /** Takes the observations a model request carries. */
  addRequest(request: ModelRequest): void {
    const { input } = request;
    if (input.kind === 'observations') {
      for (const observation of input.observations) {
        this.#observed.set(
          key(input.previousResponseId, observation.callId),
          answerOfObservation(observation),
        );
      }
    } else if (input.kind === 'items') {
      for (const item of input.items) {
        if (item.type !== 'function_call_output' || typeof item.call_id !== 'string') continue;
        const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? '');
        this.#outputTexts.set(item.call_id, output);
      }
    }
  }

  /** Takes a tool activity's result (an approval check's `approvalRequired` answers nothing). */
  addToolResult(result: unknown): void {
    const observation = Observation.safeParse(result);
    if (observation.success) this.#toolResults.set(observation.data.callId, observation.data);
  }

  /** The answer of the call `callId` of the response `responseId`, if it got one. */
  answerOf(callId: string, responseId: string | null): RecordedAnswer | undefined {
    const observed = responseId === null ? undefined : this.#observed.get(key(responseId, callId));
    if (observed !== undefined) return observed;
    const toolResult = this.#toolResults.get(callId);
    const text = this.#outputTexts.get(callId);
    if (text === undefined) return toolResult === undefined ? undefined : answerOfObservation(toolResult);
    // The text is ambiguous (a tool may output JSON that looks like a failure): the tool's own
    // result decides when it reads the same.
    if (toolResult !== undefined && observationText(toolResult) === text)
      return answerOfObservation(toolResult);
    return answerOfText(text);
  }
}

/** An answer from its text in a `function_call_output`, as {@link observationText} wrote it. */
function answerOfText(text: string): RecordedAnswer {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: true, output: text };
  }
  const failure = FailureText.safeParse(json);
  return failure.success ? { ok: false, ...failure.data } : { ok: true, output: text };
}

// A separator no response id contains, so that two ids never join into the same key.
function key(responseId: string, callId: string): string {
  return `${responseId}\u0000${callId}`;
}
