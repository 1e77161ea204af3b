/** The benchmark's no-op tool as a Temporal activity, for the `@temporalio/openai-agents` agent. */
export function noop({ size }: { size: number }): Promise<string> {
  return Promise.resolve('x'.repeat(size));
}
