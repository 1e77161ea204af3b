/** Bytes inspected to tell binary from text. */
const SNIFF_BYTES = 8192;

/** Whether file contents look binary: a NUL byte near the start, as git and grep decide. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, SNIFF_BYTES).includes(0);
}
