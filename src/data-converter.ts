import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { codecKeysFromEnvironment } from './codec/codec-config.js';
import { payloadStoreFromEnvironment } from './config.js';
import { openPayloadStore } from './payload-store/open-payload-store.js';
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
 * with them; with a payload store (`stored`, from `openPayloadStore`), large payloads live outside
 * history. The SDK stores a payload after the codecs ran, so what lies in the store is encrypted too.
 * Without either, Temporal's defaults (plain JSON).
 */
export function dataConverterFor(
  keys: KeyRing | undefined,
  stored: Pick<DataConverter, 'externalStorage'> = {},
): DataConverter {
  return {
    ...(keys === undefined
      ? {}
      : { payloadCodecs: [new EncryptionCodec(keys)], failureConverterPath: encodingFailureConverterPath }),
    ...stored,
  };
}

/** The codec part of {@link dataConverterFor} from the environment (`KEEL_CODEC_KEYS_FILE`, `KEEL_CODEC_KEY`). */
export function dataConverterFromEnvironment(environment: NodeJS.ProcessEnv = process.env): DataConverter {
  return dataConverterFor(codecKeysFromEnvironment(environment));
}

/**
 * What a client process (`KeelClient.connect`, the CLI) uses: the keys and the payload store
 * (`KEEL_PAYLOAD_STORE`) the environment gives, as the workers have them.
 */
export async function clientDataConverterFromEnvironment(
  environment: NodeJS.ProcessEnv = process.env,
): Promise<DataConverter> {
  const keys = codecKeysFromEnvironment(environment);
  const { dataConverter } = await openPayloadStore(payloadStoreFromEnvironment(environment));
  return dataConverterFor(keys, dataConverter);
}
