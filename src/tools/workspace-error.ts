import { ToolError } from './tool-error.js';

/** A path was refused because it would leave the workspace, is malformed, or names the wrong kind of file. */
export class WorkspaceError extends ToolError {
  override name = 'WorkspaceError';
}

/** A file is larger than the caller agreed to read; tools that scan many files skip it instead of failing. */
export class FileTooLargeError extends WorkspaceError {
  override name = 'FileTooLargeError';

  constructor(
    message: string,
    /** Bytes the file holds (at least; it may still be growing). */
    readonly size: number,
  ) {
    super(message);
  }
}
