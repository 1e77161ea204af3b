import type { Observation } from '../contract/observation.js';
import type { RecordedAnswer, RunReplay } from '../contract/replay.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { ToolInfo } from '../contract/tool-info.js';

/**
 * Deepest nesting canonical JSON sorts: deeper arguments compare as their raw text. A fixed depth,
 * not a caught stack overflow, so every worker decides the same way whatever its stack size.
 */
const CANONICAL_DEPTH_LIMIT = 64;

/** Characters of a call's arguments a divergence's reason quotes. */
const DIVERGED_ARGUMENTS_PREVIEW = 200;

/**
 * The text two calls' arguments are compared by: the parsed JSON with every object's keys sorted
 * (so key order and spacing never matter), or the raw text when it does not parse (or nests too
 * deep). The two forms cannot collide: the tags differ.
 */
export function canonicalArguments(argumentsJson: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch {
    return `raw:${argumentsJson}`;
  }
  const sorted = sortKeys(parsed, 0);
  return sorted === TOO_DEEP ? `raw:${argumentsJson}` : `json:${JSON.stringify(sorted)}`;
}

const TOO_DEEP = Symbol('too deep');

function sortKeys(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= CANONICAL_DEPTH_LIMIT) return TOO_DEEP;
  if (Array.isArray(value)) {
    const items = value.map((item) => sortKeys(item, depth + 1));
    return items.includes(TOO_DEEP) ? TOO_DEEP : items;
  }
  // Own keys only, and written back as own properties: `__proto__` is a key like any other.
  const record = value as Record<string, unknown>;
  const entries: Array<[string, unknown]> = [];
  for (const key of Object.keys(record).sort()) {
    const sorted = sortKeys(record[key], depth + 1);
    if (sorted === TOO_DEEP) return TOO_DEEP;
    entries.push([key, sorted]);
  }
  return Object.fromEntries(entries);
}

/** What the tool round does with one call of a replayed run. */
export type ReplayDecision =
  { kind: 'run' } | { kind: 'answer'; observation: Observation } | { kind: 'diverge'; reason: string };

/** A replayed run's call the recording has no answer for, under `unmatched: 'diverge'`: the run ends. */
export class Diverged extends Error {
  override name = 'Diverged';
}

/**
 * The recorded answers of a replayed run, and how many times each (tool, arguments) pair has been
 * answered so far. The n-th matching call gets the n-th recorded answer, then the last one again;
 * the counts are what the run carries across continue-as-new (`uses()`).
 */
export class ReplayCalls {
  /** Keyed by tool name and canonical arguments; a Map, so no name finds Object's prototype. */
  readonly #groups = new Map<string, { index: number; answers: RecordedAnswer[] }>();
  readonly #uses: number[];

  constructor(
    readonly replay: RunReplay,
    carriedUses: readonly number[] = [],
  ) {
    for (const call of replay.calls) {
      const key = callKey(call.name, call.argumentsJson);
      const group = this.#groups.get(key);
      if (group === undefined) this.#groups.set(key, { index: this.#groups.size, answers: [call.answer] });
      else group.answers.push(call.answer);
    }
    this.#uses = Array.from({ length: this.#groups.size }, (_, index) => carriedUses[index] ?? 0);
  }

  /**
   * Decides one call, in the order the model emitted them: a matched call takes its answer (and
   * uses it up); an unmatched one follows the policy. A tool the run does not offer is left to the
   * tool round, which answers `unknown_tool` without running anything.
   */
  decide(
    call: ToolCall,
    tools: ReadonlyMap<string, ToolInfo>,
    turn: number,
    approvalTools: readonly string[] = [],
  ): ReplayDecision {
    const tool = tools.get(call.name);
    if (tool === undefined) return { kind: 'run' };
    const group = this.#groups.get(callKey(call.name, call.argumentsJson));
    if (group !== undefined) {
      const used = this.#uses[group.index] ?? 0;
      this.#uses[group.index] = used + 1;
      const answer = group.answers[Math.min(used, group.answers.length - 1)] as RecordedAnswer;
      return { kind: 'answer', observation: { ...answer, callId: call.callId } };
    }
    const { unmatched, allowTools } = this.replay;
    if (unmatched === 'diverge') {
      const shown = call.argumentsJson.slice(0, DIVERGED_ARGUMENTS_PREVIEW);
      const cut = call.argumentsJson.length > shown.length ? '…' : '';
      return {
        kind: 'diverge',
        reason:
          `The run diverged from its recording at turn ${turn}: the recording has no answer for ` +
          `${call.name}(${shown}${cut}), and the replay's policy for such calls is to stop.`,
      };
    }
    // Nobody approves calls in a replay: a call that would ask would wait for ever.
    const asks = (tool.approval ?? 'never') !== 'never' || approvalTools.includes(call.name);
    const allowed = tool.readOnly === true || allowTools.includes(call.name);
    if (unmatched === 'run' && allowed && !asks) return { kind: 'run' };
    const why =
      unmatched !== 'run'
        ? 'this replay answers calls only from the recording'
        : asks
          ? 'it would wait for a person to approve it, and nobody approves calls in a replay'
          : 'it changes things and this replay runs only read-only tools and the ones it allows';
    return {
      kind: 'answer',
      observation: {
        callId: call.callId,
        ok: false,
        error: 'not_recorded',
        message:
          `This call was not run: the recorded run this replays has no answer for ${call.name} with ` +
          `these arguments, and ${why}. Use the tools as the recording did, or answer without this call.`,
      },
    };
  }

  /** How many times each recorded (tool, arguments) pair has been answered, trailing zeros cut. */
  uses(): number[] {
    const uses = [...this.#uses];
    while (uses.length > 0 && uses.at(-1) === 0) uses.pop();
    return uses;
  }
}

function callKey(name: string, argumentsJson: string): string {
  return `${name}\u0000${canonicalArguments(argumentsJson)}`;
}
