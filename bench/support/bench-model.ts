import { performance } from 'node:perf_hooks';
import { reply, ScriptedModel } from '../../src/testing/index.js';
import type { RecordedRequest, ScriptStep } from '../../src/testing/index.js';

/** Name of the no-op tool every benchmark agent offers (see `noop-tool.ts`). */
export const NOOP_TOOL = 'noop';

/** What the benchmark model does for every run. */
export interface ModelPlan {
  /** Model turns per run: turns − 1 turns ask for one `noop` call, the last answers with text. */
  turns: number;
  /** Characters the `noop` tool is asked to return (its observation). */
  observationChars?: number;
  /** Milliseconds each answer is held back (the model's latency); 0 answers at once. */
  latencyMs?: number;
}

/** Where a request belongs: the run (from the task text), its 1-based turn and its planned turns. */
interface Position {
  run: string;
  turn: number;
  turns: number;
}

/** The task text of a benchmark run: the model finds the run's key (and its turns, if not the plan's) in it. */
export function benchTask(runKey: string, turns?: number): string {
  return `Benchmark run ${runKey}${turns === undefined ? '' : ` (${turns} turns)`}: call the tool until told to stop.`;
}

const RUN_KEY = /Benchmark run (\S+)(?: \((\d+) turns\))?:/;

/**
 * A scripted Responses server for benchmarks: it answers any number of concurrent runs by looking
 * at each request (chained by `previous_response_id`, or stateless with the whole conversation), and
 * records when each turn's request arrived, by run.
 */
export class BenchModel {
  /** `performance.now()` at each request's arrival, by run key, in turn order. */
  readonly arrivals = new Map<string, number[]>();
  readonly #positions = new Map<string, Position>();

  private constructor(
    readonly server: ScriptedModel,
    readonly plan: ModelPlan,
  ) {}

  /** Starts the server on loopback. */
  static async start(plan: ModelPlan): Promise<BenchModel> {
    // The server needs the policy before the model exists; requests only come once both do.
    const holder: { model?: BenchModel } = {};
    const server = await ScriptedModel.start((request) => holder.model!.answer(request));
    holder.model = new BenchModel(server, plan);
    return holder.model;
  }

  /** Base URL for the `openai` SDK. */
  get url(): string {
    return this.server.url;
  }

  /** Requests the server received (every turn of every run). */
  get requestCount(): number {
    return this.server.requests.length;
  }

  /** Problems the server saw (unknown requests, malformed bodies). */
  get problems(): readonly string[] {
    return this.server.problems;
  }

  /** Milliseconds between consecutive turns' requests of every run: one model turn plus one tool call each. */
  stepIntervals(): number[] {
    return [...this.arrivals.values()].flatMap((times) =>
      times.slice(1).map((time, index) => time - (times[index] ?? time)),
    );
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  private answer(request: RecordedRequest): ScriptStep {
    const now = performance.now();
    const position = this.locate(request);
    this.#positions.set(`resp_${request.index + 1}`, position);
    const times = this.arrivals.get(position.run) ?? [];
    times[position.turn - 1] = now;
    this.arrivals.set(position.run, times);
    const step =
      position.turn >= position.turns
        ? reply.text(`done after ${position.turn} turns`)
        : reply.calls({ name: NOOP_TOOL, arguments: { size: this.plan.observationChars ?? 2 } });
    const latency = this.plan.latencyMs ?? 0;
    return latency > 0 ? reply.held(step, new Promise((resolve) => setTimeout(resolve, latency))) : step;
  }

  private locate(request: RecordedRequest): Position {
    const previous = request.body.previous_response_id;
    const chained = previous === undefined ? undefined : this.#positions.get(previous);
    if (chained !== undefined) return { ...chained, turn: chained.turn + 1 };
    const key = RUN_KEY.exec(JSON.stringify(request.body.input));
    const outputs = request.body.input.filter((item) => item.type === 'function_call_output').length;
    return {
      run: key?.[1] ?? 'unknown',
      turn: outputs + 1,
      turns: key?.[2] === undefined ? this.plan.turns : Number(key[2]),
    };
  }
}
