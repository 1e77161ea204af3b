import type { Observation } from './observation.js';

/** UTF-8 bytes of a string, counted without an encoder so the workflow sandbox can use it. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes of a value as JSON: about what Temporal's JSON payload converter sends for it. */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}

/**
 * Text of at most `maxBytes`, cut at a character boundary. Measured as UTF-8, or with `asJson` as the
 * JSON string it becomes (escapes such as `\u0001` count six bytes).
 */
export function cutToBytes(text: string, maxBytes: number, asJson = false): string {
  const measure = asJson ? jsonBytes : utf8Bytes;
  if (measure(text) <= maxBytes) return text;
  let low = 0;
  let high = Math.min(text.length, maxBytes);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (measure(text.slice(0, middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  // Never split a surrogate pair.
  const last = text.charCodeAt(low - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? low - 1 : low);
}

/**
 * Observations that together fit in `budgetBytes`: small ones stay whole, the largest are cut to an
 * equal share and become `output_too_large` with the start of their output, so one turn of many large
 * results cannot make a payload Temporal refuses. Unchanged when they already fit. Pure.
 */
export function fitObservations(observations: readonly Observation[], budgetBytes: number): Observation[] {
  const sizes = observations.map((observation) => jsonBytes(observation));
  if (sizes.reduce((sum, size) => sum + size, 0) <= budgetBytes) return [...observations];
  // Water-filling: observations below the fair share keep their size; the rest share what is left.
  const order = sizes.map((size, index) => ({ size, index })).sort((a, b) => a.size - b.size);
  let remaining = budgetBytes;
  let share = 0;
  const cut = new Set<number>();
  for (const [position, { size, index }] of order.entries()) {
    // Once one is cut, it and every larger one get the same share of what is left.
    if (cut.size === 0) share = remaining / (order.length - position);
    if (cut.size === 0 && size <= share) remaining -= size;
    else cut.add(index);
  }
  return observations.map((observation, index) => {
    if (!cut.has(index)) return observation;
    const text = observation.ok ? observation.output : (observation.preview ?? observation.message);
    const overhead = 400;
    return {
      callId: observation.callId,
      ok: false,
      error: 'output_too_large',
      message:
        `The result was ${sizes[index]} bytes: too large to send together with this turn's other results, ` +
        'so only its start is shown. Ask for less at a time (a smaller range or a narrower query).',
      preview: cutToBytes(text, Math.max(0, Math.floor(share) - overhead), true),
    };
  });
}
