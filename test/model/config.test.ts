import { describe, expect, it } from 'vitest';
import { FALLBACK_MODEL, modelConfigFromEnvironment } from '../../src/model/config.js';

describe('modelConfigFromEnvironment', () => {
  it('reads the key, the base URL and the model from the environment', () => {
    const config = modelConfigFromEnvironment({
      OPENAI_API_KEY: 'sk-test-key',
      OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1',
      KEEL_MODEL: 'gpt-custom',
    });

    expect(config).toEqual({
      apiKey: 'sk-test-key',
      baseURL: 'http://127.0.0.1:8080/v1',
      defaultModel: 'gpt-custom',
    });
  });

  it('falls back to the default model and leaves key and base URL unset when nothing is configured', () => {
    const config = modelConfigFromEnvironment({});

    expect(config).toEqual({ apiKey: undefined, baseURL: undefined, defaultModel: FALLBACK_MODEL });
    expect(FALLBACK_MODEL).toBe('gpt-5-mini');
  });

  it('treats empty strings as unset', () => {
    const config = modelConfigFromEnvironment({ OPENAI_API_KEY: '', OPENAI_BASE_URL: '', KEEL_MODEL: '' });

    expect(config).toEqual({ apiKey: undefined, baseURL: undefined, defaultModel: FALLBACK_MODEL });
  });

  it('treats whitespace-only values as unset and trims the others', () => {
    const config = modelConfigFromEnvironment({
      OPENAI_API_KEY: '  sk-test-key\n',
      OPENAI_BASE_URL: '   ',
      KEEL_MODEL: ' gpt-custom ',
    });

    expect(config).toEqual({ apiKey: 'sk-test-key', baseURL: undefined, defaultModel: 'gpt-custom' });
  });

  it('ignores unrelated variables', () => {
    const config = modelConfigFromEnvironment({ OPENAI_MODEL: 'gpt-other', MODEL: 'gpt-other' });

    expect(config.defaultModel).toBe(FALLBACK_MODEL);
  });
});
