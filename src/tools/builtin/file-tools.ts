import type { Tool } from '../define-tool.js';
import type { Workspace } from '../workspace.js';
import { workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import { createEditFileTool } from './edit-file.js';
import { createListDirectoryTool } from './list-directory.js';
import { createReadFileTool } from './read-file.js';
import { createSearchFilesTool } from './search-files.js';
import { createWriteFileTool } from './write-file.js';

/** The five file tools of one workspace, and that workspace for the worker's start-up checks. */
export interface FileTools extends ReadonlyArray<Tool> {
  /**
   * The tools' workspace, opened on the first call (or the first tool call) and kept. Rejects while
   * the root cannot be opened; a worker awaits it at start-up to fail early and loudly.
   */
  workspace(): Promise<Workspace>;
}

/**
 * `read_file`, `list_directory`, `search_files`, `write_file` and `edit_file`, bound to one workspace:
 * every path they take is resolved inside it, and protected paths (`protect`, `.git` and `.keel` by
 * default) are never written. `fileTools({ root: './work' })` opens the directory lazily; an opened
 * `Workspace`, or another tool set's `workspace`, shares one. A bad root or pattern throws at once.
 */
export function fileTools(source: WorkspaceSource): FileTools {
  const workspace = workspaceOpener(source);
  const tools: Tool[] = [
    createReadFileTool(workspace),
    createListDirectoryTool(workspace),
    createSearchFilesTool(workspace),
    createWriteFileTool(workspace),
    createEditFileTool(workspace),
  ];
  return Object.freeze(Object.assign(tools, { workspace }));
}
