/** Brands tool errors across copies of Keel: a tools module may load another copy than the worker's. */
const TOOL_ERROR = Symbol.for('keel.ToolError');

/**
 * An error whose message is meant for the model: thrown by a tool when the call cannot succeed for a
 * reason the model can act on ("no such file: src/a.ts"). Any other error a tool throws is reported
 * to the model as a generic failure and logged in full on the worker.
 */
export class ToolError extends Error {
  override name = 'ToolError';
  readonly [TOOL_ERROR] = true;

  /** `instanceof ToolError` holds for a ToolError of any copy of Keel, not only this module's. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses (WorkspaceError, …) keep the ordinary check.
    if (this !== ToolError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [TOOL_ERROR]?: unknown })[TOOL_ERROR] === true
    );
  }
}
