/** Directory names file tools do not descend into unless asked for by path: history, dependencies, Keel's own state. */
export const IGNORED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules', '.keel']);
