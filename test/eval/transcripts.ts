import type { RecordedAnswer } from '../../src/contract/replay.js';
import type { RunTranscript, TranscriptOutcome } from '../../src/eval/recorded-run.js';

/** A call as a test writes it: name, arguments (an object is JSON-encoded as written) and answer. */
export type CallSpec = [
  name: string,
  argumentsJson: string | Record<string, unknown>,
  answer?: RecordedAnswer,
];

/** A turn as a test writes it: the model's text and the calls it asked for. */
export interface TurnSpec {
  text?: string;
  calls?: CallSpec[];
  tokens?: number;
}

/** A hand-built transcript: one entry per turn; the outcome `completed` with `answer` unless given. */
export function transcript(
  options: {
    runId?: string;
    task?: string;
    answer?: string;
    turns?: TurnSpec[];
    outcome?: Partial<TranscriptOutcome>;
    costUsd?: number;
  } = {},
): RunTranscript {
  let callNumber = 0;
  const turns = (options.turns ?? [{}]).map((spec, index) => {
    const tokens = spec.tokens ?? 100;
    return {
      turn: index + 1,
      responseId: `resp_${index + 1}`,
      model: 'gpt-test',
      text: spec.text ?? '',
      usage: {
        inputTokens: tokens - 10,
        cachedInputTokens: 0,
        outputTokens: 10,
        reasoningTokens: 0,
        totalTokens: tokens,
      },
      calls: (spec.calls ?? []).map(([name, argumentsJson, answer]) => ({
        callId: `call_${++callNumber}`,
        name,
        argumentsJson: typeof argumentsJson === 'string' ? argumentsJson : JSON.stringify(argumentsJson),
        ...(answer === undefined
          ? { answer: { ok: true as const, output: `output of ${name}` } }
          : { answer }),
      })),
    };
  });
  const totalTokens = turns.reduce((sum, turn) => sum + turn.usage.totalTokens, 0);
  return {
    runId: options.runId ?? 'run-1',
    input: { task: options.task ?? 'Do the thing' },
    task: options.task ?? 'Do the thing',
    turns,
    outcome: { status: 'completed', text: options.answer ?? 'Done.', ...options.outcome },
    usage: {
      inputTokens: totalTokens - 10 * turns.length,
      cachedInputTokens: 0,
      outputTokens: 10 * turns.length,
      reasoningTokens: 0,
      totalTokens,
    },
    ...(options.costUsd === undefined ? {} : { costUsd: options.costUsd }),
  };
}

/** An answer refused because the recording had no such call. */
export const NOT_RECORDED: RecordedAnswer = {
  ok: false,
  error: 'not_recorded',
  message: 'no recorded call matches',
};
