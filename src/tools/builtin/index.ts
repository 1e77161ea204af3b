export { createEditFileTool } from './edit-file.js';
export { fileTools } from './file-tools.js';
export type { FileTools } from './file-tools.js';
export { createListDirectoryTool } from './list-directory.js';
export { createReadFileTool } from './read-file.js';
export { createSearchFilesTool } from './search-files.js';
export { createWriteFileTool } from './write-file.js';
