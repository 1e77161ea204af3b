/**
 * An error whose message is meant for the model: thrown by a tool when the call cannot succeed for a
 * reason the model can act on ("no such file: src/a.ts"). Any other error a tool throws is reported
 * to the model as a generic failure and logged in full on the worker.
 */
export class ToolError extends Error {
  override name = 'ToolError';
}
