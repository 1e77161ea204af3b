import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
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
      mode: 'foreground',
    });
  });

  it('falls back to the default model and leaves key and base URL unset when nothing is configured', () => {
    const config = modelConfigFromEnvironment({});

    expect(config).toEqual({
      apiKey: undefined,
      baseURL: undefined,
      defaultModel: FALLBACK_MODEL,
      mode: 'background',
    });
    expect(FALLBACK_MODEL).toBe('gpt-5-mini');
  });

  it('treats empty strings as unset', () => {
    const config = modelConfigFromEnvironment({
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
      KEEL_MODEL: '',
      KEEL_MODEL_MODE: '',
    });

    expect(config).toEqual({
      apiKey: undefined,
      baseURL: undefined,
      defaultModel: FALLBACK_MODEL,
      mode: 'background',
    });
  });

  it('treats whitespace-only values as unset and trims the others', () => {
    const config = modelConfigFromEnvironment({
      OPENAI_API_KEY: '  sk-test-key\n',
      OPENAI_BASE_URL: '   ',
      KEEL_MODEL: ' gpt-custom ',
    });

    expect(config).toEqual({
      apiKey: 'sk-test-key',
      baseURL: undefined,
      defaultModel: 'gpt-custom',
      mode: 'background',
    });
  });

  it('uses background mode for the OpenAI API and foreground mode for other servers', () => {
    expect(modelConfigFromEnvironment({}).mode).toBe('background');
    expect(modelConfigFromEnvironment({ OPENAI_BASE_URL: 'http://localhost:11434/v1' }).mode).toBe(
      'foreground',
    );
  });

  it('lets KEEL_MODEL_MODE override the mode either way', () => {
    expect(modelConfigFromEnvironment({ KEEL_MODEL_MODE: 'foreground' }).mode).toBe('foreground');
    expect(
      modelConfigFromEnvironment({ OPENAI_BASE_URL: 'http://proxy/v1', KEEL_MODEL_MODE: ' background ' })
        .mode,
    ).toBe('background');
  });

  it('refuses an unknown KEEL_MODEL_MODE with a ConfigError that names the choices', () => {
    expect(() => modelConfigFromEnvironment({ KEEL_MODEL_MODE: 'stream' })).toThrow(
      new ConfigError('KEEL_MODEL_MODE must be "background" or "foreground", not "stream"'),
    );
  });

  it('ignores unrelated variables', () => {
    const config = modelConfigFromEnvironment({ OPENAI_MODEL: 'gpt-other', MODEL: 'gpt-other' });

    expect(config.defaultModel).toBe(FALLBACK_MODEL);
  });
});
