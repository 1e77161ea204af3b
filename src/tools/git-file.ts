/** The most a `.git` file may hold to be read as a `gitdir:` pointer (git's own are one short line). */
export const GIT_FILE_LIMIT = 4096;

/**
 * The directory a `.git` file names (`gitdir: <path>`, as `git init --separate-git-dir` and worktrees
 * write), relative to the directory holding it unless absolute; undefined when it names none.
 */
export function gitDirectoryNamed(text: string): string | undefined {
  return /^gitdir: *(.+?)\s*$/m.exec(text.slice(0, GIT_FILE_LIMIT))?.[1];
}
