import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { codecKeysFromEnvironment } from './codec/codec-config.js';
import { EncryptionCodec } from './codec/encryption-codec.js';
import type { KeyRing } from './codec/key-ring.js';

/**
 * The module whose `failureConverter` moves failure messages and stack traces into an encoded (so
 * encrypted) attribute: give it as `failureConverterPath` to `bundleWorkflowCode` too when you
 * bundle Keel's workflow yourself, or workflow failures stay readable in history.
 */
export const encodingFailureConverterPath = fileURLToPath(
  new URL(`./codec/failure-converter.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url),
);

/**
 * The one data converter every Keel process uses (worker, `KeelClient`, the CLI, replays): with
 * keys, payloads are encrypted by {@link EncryptionCodec} and failures' messages and stack traces
 * with them; without, Temporal's defaults (plain JSON).
 */
export function dataConverterFor(keys: KeyRing | undefined): DataConverter {
  if (keys === undefined) return {};
  return { payloadCodecs: [new EncryptionCodec(keys)], failureConverterPath: encodingFailureConverterPath };
}

/** {@link dataConverterFor} the keys the environment gives (`KEEL_CODEC_KEYS_FILE`, `KEEL_CODEC_KEY`). */
export function dataConverterFromEnvironment(environment: NodeJS.ProcessEnv = process.env): DataConverter {
  return dataConverterFor(codecKeysFromEnvironment(environment));
}
