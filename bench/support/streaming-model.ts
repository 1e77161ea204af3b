import { reply, ScriptedModel } from '../../src/testing/index.js';
import type { RecordedRequest, ScriptStep } from '../../src/testing/index.js';
import { NOOP_TOOL } from './bench-model.js';

/** How the streaming benchmark model writes each turn. */
export interface StreamingPlan {
  /** Characters of text per turn (a multiple of `deltaChars`). */
  turnChars: number;
  /** Characters per delta: the scripted model sends one whitespace-ended word per delta. */
  deltaChars: number;
  /** Milliseconds between deltas; undefined writes them as fast as the event loop goes (a model answering at once). */
  deltaMs: number | undefined;
}

/** Where a request belongs: its run (from the task text), its 1-based turn and the run's turns. */
interface Position {
  run: string;
  turn: number;
  turns: number;
}

/** The task of a streaming benchmark run: the model reads the run's key and its turns from it. */
export function streamingTask(runKey: string, turns: number): string {
  return `Streaming run ${runKey} (${turns} turns): write, then call the tool until told to stop.`;
}

/** A request that names its own turn (`turn 3`), as the workflow-streams comparison sends it. */
export function turnRequest(runKey: string, turns: number, turn: number): string {
  return `${streamingTask(runKey, turns)} turn ${turn}`;
}

const RUN_KEY = /Streaming run (\S+) \((\d+) turns\):[^"]*?(?: turn (\d+))?"/;

/**
 * One turn's text: `turnChars / deltaChars` words of exactly `deltaChars` characters (the last one a
 * space), so the scripted model streams it in deltas of that size.
 */
export function turnText(turn: number, plan: StreamingPlan): string {
  const words = Math.floor(plan.turnChars / plan.deltaChars);
  return Array.from({ length: words }, (_, index) =>
    `t${turn}w${index}`.padEnd(plan.deltaChars - 1, 'x').concat(' '),
  ).join('');
}

/**
 * A scripted Responses server for streamed runs, any number at once: every turn streams
 * `turnChars` characters of text at the plan's pace, then (all turns but the last) asks for one
 * no-op call; the last turn is text only. Runs are told apart by the key in their task, turns by
 * `previous_response_id` chains, the count of call outputs (stateless), or an explicit `turn N`.
 */
export class StreamingModel {
  readonly #positions = new Map<string, Position>();

  private constructor(
    readonly server: ScriptedModel,
    readonly plan: StreamingPlan,
  ) {}

  /** Starts the server on loopback. */
  static async start(plan: StreamingPlan): Promise<StreamingModel> {
    const holder: { model?: StreamingModel } = {};
    const server = await ScriptedModel.start((request) => holder.model!.answer(request));
    holder.model = new StreamingModel(server, plan);
    return holder.model;
  }

  /** Base URL for the `openai` SDK. */
  get url(): string {
    return this.server.url;
  }

  /** Problems the server saw (unknown requests, malformed bodies). */
  get problems(): readonly string[] {
    return this.server.problems;
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  private answer(request: RecordedRequest): ScriptStep {
    const position = this.locate(request);
    this.#positions.set(`resp_${request.index + 1}`, position);
    const text = turnText(position.turn, this.plan);
    const step =
      position.turn >= position.turns
        ? reply.text(text)
        : reply.items([{ text }, { call: { name: NOOP_TOOL, arguments: { size: 2 } } }]);
    return reply.streamed(step, this.plan.deltaMs === undefined ? {} : { deltaMs: this.plan.deltaMs });
  }

  private locate(request: RecordedRequest): Position {
    const previous = request.body.previous_response_id;
    const chained = previous === undefined ? undefined : this.#positions.get(previous);
    if (chained !== undefined) return { ...chained, turn: chained.turn + 1 };
    const key = RUN_KEY.exec(JSON.stringify(request.body.input));
    const outputs = request.body.input.filter((item) => item.type === 'function_call_output').length;
    return {
      run: key?.[1] ?? 'unknown',
      turn: key?.[3] === undefined ? outputs + 1 : Number(key[3]),
      turns: key?.[2] === undefined ? 1 : Number(key[2]),
    };
  }
}
