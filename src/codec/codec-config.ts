import { readFileSync } from 'node:fs';
import { ConfigError } from '../config-error.js';
import { optionalText, readEnvironment } from '../env.js';
import { checkKeyId, decodeKey, parseKeysFile } from './key-ring.js';
import type { KeyRing } from './key-ring.js';

/**
 * The payload encryption settings: a keys file (`KEEL_CODEC_KEYS_FILE`, for rotation) or one key in
 * the environment (`KEEL_CODEC_KEY` with its id `KEEL_CODEC_KEY_ID`). Worker, client, CLI and codec
 * server all read them, so every process of a deployment encrypts the same way.
 */
export const codecVariables = {
  KEEL_CODEC_KEYS_FILE: optionalText,
  KEEL_CODEC_KEY: optionalText,
  KEEL_CODEC_KEY_ID: optionalText,
};

/** The keys payloads are encrypted with; `undefined` when none is configured (payloads stay plain JSON). */
export function codecKeysFromEnvironment(environment: NodeJS.ProcessEnv = process.env): KeyRing | undefined {
  const values = readEnvironment(codecVariables, environment);
  const keyId =
    values.KEEL_CODEC_KEY_ID === undefined
      ? undefined
      : checkKeyId(values.KEEL_CODEC_KEY_ID, 'KEEL_CODEC_KEY_ID');
  if (values.KEEL_CODEC_KEYS_FILE !== undefined && values.KEEL_CODEC_KEY !== undefined) {
    throw new ConfigError(
      'Set KEEL_CODEC_KEYS_FILE or KEEL_CODEC_KEY, not both: the keys file lists every key (the first one, or ' +
        'KEEL_CODEC_KEY_ID, encrypts)',
    );
  }
  if (values.KEEL_CODEC_KEYS_FILE !== undefined) {
    const file = values.KEEL_CODEC_KEYS_FILE;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(
        `KEEL_CODEC_KEYS_FILE is ${file}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    return parseKeysFile(text, file, 'KEEL_CODEC_KEYS_FILE', keyId);
  }
  if (values.KEEL_CODEC_KEY !== undefined) {
    if (keyId === undefined) {
      throw new ConfigError(
        'KEEL_CODEC_KEY needs KEEL_CODEC_KEY_ID: the name stored beside every payload it encrypts, so the key ' +
          'can be rotated later (e.g. KEEL_CODEC_KEY_ID=2026-12)',
      );
    }
    const key = decodeKey(values.KEEL_CODEC_KEY, 'KEEL_CODEC_KEY');
    return { activeKeyId: keyId, keys: new Map([[keyId, key]]), source: 'KEEL_CODEC_KEY' };
  }
  if (keyId !== undefined) {
    throw new ConfigError(
      'KEEL_CODEC_KEY_ID is set, but no key: set KEEL_CODEC_KEY or KEEL_CODEC_KEYS_FILE too',
    );
  }
  return undefined;
}
