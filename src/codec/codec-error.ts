/**
 * A payload the codec cannot decrypt: encrypted with a key this process was not given, or not
 * Keel's encryption at all. The message names the key id and the setting to fix, never a key.
 */
export class CodecError extends Error {
  override name = 'CodecError';
}
