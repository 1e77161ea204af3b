import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveLine } from '../../src/contract/stream-event.js';
import { liveTurnPublisher } from '../../src/activities/turn-publisher.js';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { LiveHub } from '../../src/stream/live-hub.js';

let hub: LiveHub;
afterEach(async () => {
  await hub?.close();
});

/** Every line a GET of `url` answers until the server ends it. */
async function lines(url: string): Promise<LiveLine[]> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/x-ndjson');
  const body = await response.text();
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => LiveLine.parse(JSON.parse(line)));
}

/** Sends raw bytes to the hub's port; resolves with what came back before the connection closed. */
function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = net.connect(Number(port), hostname, () => socket.end(request));
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe("the worker's live hub", () => {
  it('serves an attempt from its start, late, and from an index on, then says how it ended', async () => {
    hub = new LiveHub();
    const turn = await hub.open(3);
    turn.text('Hello, ');
    turn.text('');
    turn.text('world.');
    turn.toolCall('call_1', 'echo');
    turn.end('completed');
    turn.text(' ignored after the end');
    // Consecutive text comes as one line, numbered by its last event.
    expect(await lines(turn.stream.url)).toEqual([
      { index: 1, event: { type: 'text', turn: 3, delta: 'Hello, world.' } },
      { index: 2, event: { type: 'tool_call', turn: 3, callId: 'call_1', name: 'echo' } },
      { done: 'completed' },
    ]);
    expect(await lines(`${turn.stream.url}?from=2`)).toEqual([
      { index: 2, event: { type: 'tool_call', turn: 3, callId: 'call_1', name: 'echo' } },
      { done: 'completed' },
    ]);
    expect(turn.stream.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/keel\/live\/[\w-]{24}$/u);
  });

  it('sends events to a reader as they come, and ends its connection with the attempt', async () => {
    hub = new LiveHub();
    const turn = await hub.open(1);
    turn.text('first');
    const response = await fetch(turn.stream.url);
    // Connected: what follows is sent live.
    turn.text(' second');
    turn.end('failed');
    const got = (await response.text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => LiveLine.parse(JSON.parse(line)));
    expect(got.at(-1)).toEqual({ done: 'failed' });
    const text = got
      .map((line) => ('event' in line && line.event.type === 'text' ? line.event.delta : ''))
      .join('');
    expect(text).toBe('first second');
  });

  it('refuses what is not a read of a known attempt, and a malformed request does not take it down', async () => {
    hub = new LiveHub();
    const turn = await hub.open(1);
    const { origin } = new URL(turn.stream.url);
    expect((await fetch(`${origin}/keel/live/not-an-attempt`)).status).toBe(404);
    expect((await fetch(`${origin}/`)).status).toBe(404);
    expect((await fetch(turn.stream.url, { method: 'POST', body: 'x' })).status).toBe(405);
    const answer = await raw(turn.stream.url, 'GET //[ HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400/u);
    // Still serving.
    turn.end('completed');
    expect(await lines(turn.stream.url)).toEqual([{ done: 'completed' }]);
  });

  it("holds an unwatched turn's text back, then gives a reader all of it redacted, a secret split across deltas too", async () => {
    hub = new LiveHub();
    const live = await hub.open(1);
    const secret = 'sk-live-7f3a9c2e5b1d8f4a';
    const publisher = liveTurnPublisher(live, createSanitizer({ secrets: [secret] }));
    publisher.text('Your key is sk-live-7f3a');
    publisher.text('9c2e5b1d8f4a and ');
    const response = await fetch(live.stream.url);
    publisher.text('nothing else.');
    publisher.toolCall('call_1', 'echo');
    publisher.end('completed');
    const got = (await response.text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => LiveLine.parse(JSON.parse(line)));
    const text = got
      .map((line) => ('event' in line && line.event.type === 'text' ? line.event.delta : ''))
      .join('');
    expect(text).toBe('Your key is [redacted] and nothing else.');
    expect(JSON.stringify(got)).not.toContain('sk-live');
    expect(got.at(-2)).toMatchObject({ event: { type: 'tool_call', callId: 'call_1' } });
    expect(got.at(-1)).toEqual({ done: 'completed' });
  });
});
