import { describe, expect, it } from 'vitest';
import { Observation, observationText } from '../../src/contract/observation.js';

describe('observationText', () => {
  it('sends a successful output verbatim', () => {
    expect(observationText({ callId: 'call_1', ok: true, output: 'line 1\nline 2' })).toBe('line 1\nline 2');
  });

  it('does not re-encode an output that is already JSON', () => {
    expect(observationText({ callId: 'call_1', ok: true, output: '{"sum":3}' })).toBe('{"sum":3}');
  });

  it('sends an error as JSON with its error code and message', () => {
    const text = observationText({
      callId: 'call_1',
      ok: false,
      error: 'invalid_arguments',
      message: 'path: must be text',
    });

    expect(text).toBe('{"error":"invalid_arguments","message":"path: must be text"}');
  });

  it('adds the preview of an output that was too large', () => {
    const text = observationText({
      callId: 'call_1',
      ok: false,
      error: 'output_too_large',
      message: 'The output was cut.',
      preview: 'first "lines"\n',
    });

    expect(JSON.parse(text)).toEqual({
      error: 'output_too_large',
      message: 'The output was cut.',
      preview: 'first "lines"\n',
    });
  });

  it('never includes the call id, which the request carries separately', () => {
    const text = observationText({
      callId: 'call_secret_id',
      ok: false,
      error: 'timeout',
      message: 'Too slow.',
    });

    expect(text).not.toContain('call_secret_id');
  });

  it('produces text for every observation error', () => {
    for (const error of Observation.options[1].shape.error.options) {
      const text = observationText({ callId: 'call_1', ok: false, error, message: 'm' });
      expect(JSON.parse(text)).toEqual({ error, message: 'm' });
    }
  });
});
