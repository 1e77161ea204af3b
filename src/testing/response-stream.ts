/**
 * The scripted model's streamed answers: a response turned into the Responses API's server-sent
 * events, generated at the pace a {@link StreamPlan} sets and written to any number of connections
 * (a background response can be streamed again, from any event, by a re-attaching client).
 */
import type { ServerResponse } from 'node:http';
import { unfinished } from './response-resource.js';
import type { StreamPlan } from './script.js';

type Event = Record<string, unknown> & { type: string };

/** The events the Responses API streams for `answer`, without sequence numbers. */
function eventsOf(answer: Record<string, unknown>): Event[] {
  const output = (answer.output as Array<Record<string, unknown>>) ?? [];
  const events: Event[] = [{ type: 'response.created', response: unfinished(answer, 'in_progress') }];
  output.forEach((item, outputIndex) => {
    const id = item.id as string;
    if (item.type === 'message') {
      events.push({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', content: [] },
      });
      const parts = item.content as Array<{ type: string; text: string }>;
      parts.forEach((part, contentIndex) => {
        events.push({
          type: 'response.content_part.added',
          item_id: id,
          output_index: outputIndex,
          content_index: contentIndex,
          part: { ...part, text: '' },
        });
        for (const delta of part.text.match(/\s*\S+\s*|\s+/g) ?? []) {
          events.push({
            type: 'response.output_text.delta',
            item_id: id,
            output_index: outputIndex,
            content_index: contentIndex,
            delta,
            logprobs: [],
          });
        }
        events.push({
          type: 'response.output_text.done',
          item_id: id,
          output_index: outputIndex,
          content_index: contentIndex,
          text: part.text,
          logprobs: [],
        });
        events.push({
          type: 'response.content_part.done',
          item_id: id,
          output_index: outputIndex,
          content_index: contentIndex,
          part,
        });
      });
    } else if (item.type === 'function_call') {
      events.push({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      events.push({
        type: 'response.function_call_arguments.delta',
        item_id: id,
        output_index: outputIndex,
        delta: item.arguments,
      });
      events.push({
        type: 'response.function_call_arguments.done',
        item_id: id,
        output_index: outputIndex,
        arguments: item.arguments,
      });
    } else {
      events.push({ type: 'response.output_item.added', output_index: outputIndex, item });
    }
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
  });
  events.push({
    type: answer.status === 'incomplete' ? 'response.incomplete' : 'response.completed',
    response: answer,
  });
  return events;
}

/** One response being generated as events; connections follow it from any sequence number. */
export class ResponseStream {
  /** The events generated so far, each with its `sequence_number` (its index). */
  readonly events: Event[] = [];
  /** Text deltas generated so far. */
  deltas = 0;
  done = false;
  readonly #all: Event[];
  readonly #listeners = new Set<() => void>();

  constructor(answer: Record<string, unknown>) {
    this.#all = eventsOf(answer).map((event, index) => ({ ...event, sequence_number: index }));
  }

  /**
   * Generates the events as `plan` says, calling `onDelta` after each text delta. Resolves `cut` when
   * the plan drops the connection instead of finishing.
   */
  async generate(plan: StreamPlan, onDelta: () => void): Promise<'done' | 'cut'> {
    let paused = false;
    for (const event of this.#all) {
      const delta = event.type === 'response.output_text.delta';
      if (delta && plan.cutAfter !== undefined && this.deltas >= plan.cutAfter) return 'cut';
      // Pausing after no deltas holds back all output, not just text: a reply of calls alone
      // (no text to pause before) waits too, with only `response.created` out.
      const pauseHere =
        plan.pauseAfter !== undefined &&
        this.deltas === plan.pauseAfter &&
        (delta || (plan.pauseAfter === 0 && event.type !== 'response.created'));
      if (pauseHere && !paused) {
        paused = true;
        await plan.resume;
      }
      if (delta) this.deltas += 1;
      this.events.push(event);
      this.#wake();
      if (event.type === 'response.output_text.delta') {
        onDelta();
        // One delta per tick, as a model writes: a reader sees them arrive, not all at once.
        await new Promise((resolve) =>
          plan.deltaMs === undefined ? setImmediate(resolve) : setTimeout(resolve, plan.deltaMs),
        );
      }
    }
    this.done = true;
    this.#wake();
    return 'done';
  }

  /** Writes the events after `startingAfter` to `response` as server-sent events, as they come. */
  async pipe(response: ServerResponse, startingAfter = -1, cut?: Promise<'done' | 'cut'>): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let next = startingAfter + 1;
    let dropped = false;
    cut?.then(
      (how) => {
        if (how !== 'cut') return;
        dropped = true;
        response.destroy();
        this.#wake();
      },
      () => undefined,
    );
    while (!response.destroyed && !dropped) {
      while (next < this.events.length) {
        const event = this.events[next]!;
        response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        next += 1;
      }
      if (this.done) break;
      await new Promise<void>((resolve) => {
        const listener = (): void => {
          this.#listeners.delete(listener);
          response.removeListener('close', listener);
          resolve();
        };
        this.#listeners.add(listener);
        response.once('close', listener);
      });
    }
    if (!response.destroyed) response.end();
  }

  #wake(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
