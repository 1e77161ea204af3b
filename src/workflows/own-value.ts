/** The value `record` holds under `key` itself, never one it inherits from Object.prototype. */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
