export { listDirectory } from './list-directory.js';
export { readFile } from './read-file.js';
