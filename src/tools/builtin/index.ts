export { editFile } from './edit-file.js';
export { listDirectory } from './list-directory.js';
export { readFile } from './read-file.js';
export { searchFiles } from './search-files.js';
export { writeFile } from './write-file.js';
