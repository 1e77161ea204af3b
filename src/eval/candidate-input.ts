import { RecordedCall } from '../contract/replay.js';
import type { RunReplayArgs, UnmatchedCallPolicy } from '../contract/replay.js';
import type { ConversationMode, RunInputArgs } from '../contract/run-input.js';
import type { RunTranscript } from './recorded-run.js';

/** What an eval changes for its candidate: any of the run's instructions, model, agent, tools and conversation. */
export interface CandidateSettings {
  instructions?: string;
  model?: string;
  agent?: string;
  tools?: string[];
  /** `stateless` for a model server that keeps no conversation (llama.cpp, Ollama, LiteLLM without a database). */
  conversation?: ConversationMode;
}

/** How the candidate's calls that the recording has no answer for are handled. */
export interface ReplaySettings {
  unmatched: UnmatchedCallPolicy;
  allowTools: string[];
}

/**
 * Fields of a recorded input that a candidate does not take over: a session's follow-ups are not
 * replayed (the case is its task), and an eval has nobody to approve calls.
 */
const NOT_REPLAYED = [
  'session',
  'idleTimeoutSeconds',
  'approvalTools',
  'approvalTimeoutSeconds',
  'replay',
] as const;

/** Most recorded calls one replay carries (RunReplay's limit). */
const MAX_REPLAYED_CALLS = 10_000;

/** Settings an agent definition gives a run, which a recorded run's own would override. */
const AGENT_SETTINGS = ['instructions', 'model', 'tools'] as const;

/**
 * The candidate run of a recorded run: its task and limits, under the candidate's settings, with
 * every recorded call's answer to replay. A candidate that names an agent drops the recorded run's
 * own instructions, model and tools, so the agent's apply (unless the candidate sets them too).
 */
export function candidateInput(
  recorded: Pick<RunTranscript, 'input' | 'task' | 'turns'> | { task: string },
  candidate: CandidateSettings,
  replay: ReplaySettings,
): RunInputArgs {
  const base: Record<string, unknown> = 'input' in recorded ? { ...recorded.input } : {};
  for (const field of NOT_REPLAYED) delete base[field];
  if (candidate.agent !== undefined) for (const field of AGENT_SETTINGS) delete base[field];
  const input: Record<string, unknown> = { ...base, task: recorded.task };
  for (const [field, value] of Object.entries(candidate)) if (value !== undefined) input[field] = value;
  // The contract's most: a recording with more calls replays its first ones.
  const calls: RecordedCall[] =
    'turns' in recorded ? recordedCalls(recorded).slice(0, MAX_REPLAYED_CALLS) : [];
  input.replay = {
    calls,
    unmatched: replay.unmatched,
    allowTools: replay.allowTools,
  } satisfies RunReplayArgs;
  return input as RunInputArgs;
}

/**
 * Every call of the recording that got an answer, in the order the run made them, but those no
 * replay can use: a made-up tool name (the model's, answered `unknown_tool`) matches no tool the
 * candidate has, and arguments over the contract's limit would refuse the whole eval.
 */
export function recordedCalls(recorded: Pick<RunTranscript, 'turns'>): RecordedCall[] {
  return recorded.turns.flatMap((turn) =>
    turn.calls.flatMap((call) => {
      const kept = RecordedCall.safeParse({
        name: call.name,
        argumentsJson: call.argumentsJson,
        answer: call.answer,
      });
      return call.answer !== undefined && kept.success ? [kept.data] : [];
    }),
  );
}
