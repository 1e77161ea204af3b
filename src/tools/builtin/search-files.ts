import type { Dirent } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { inWorkspace, workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import { describeFileKind } from '../file-kind.js';
import { errorCode } from '../held-directory.js';
import { ToolError } from '../tool-error.js';
import { FileTooLargeError, WorkspaceError } from '../workspace.js';
import type { OpenFileOptions, Workspace, WorkspaceDirectory } from '../workspace.js';
import { compileFileNameGlob } from './file-name-glob.js';
import { compilePattern } from './search-pattern.js';
import { IGNORED_DIRECTORIES } from './ignored-directories.js';
import { createLineScanner, ScanFailedError, ScanTimeoutError } from './line-scanner.js';
import type { LineMatch, LineScanner } from './line-scanner.js';
import { looksBinary } from './looks-binary.js';

/** Most matching lines one search may return. */
export const SEARCH_FILES_MAX_RESULTS = 1_000;
/** Larger files are skipped (and counted). */
export const SEARCH_FILES_MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Files one search reads before it stops. */
export const SEARCH_FILES_MAX_FILES = 20_000;
/** Characters of output after which a search stops, below the default observation cap. */
export const SEARCH_FILES_MAX_OUTPUT_CHARS = 10_000;
/** Characters of each line that are searched: minified files have lines of megabytes. */
export const SEARCH_FILES_MAX_LINE_CHARS = 10_000;
/** Characters of a matching line that are shown. */
export const SEARCH_FILES_SHOWN_LINE_CHARS = 200;
/** Files of one directory read at the same time. */
const READ_AHEAD = 8;
/** Milliseconds the pattern may run on one file before the search stops; its scan thread is terminated then. */
export const SEARCH_FILES_REGEX_BUDGET_MS = 1_000;

/** `search_files` for the workspace of `source`: searches text files for a string or regex, like grep -rn. */
export function createSearchFilesTool(source: WorkspaceSource) {
  const open = workspaceOpener(source);
  return defineTool({
    name: 'search_files',
    description:
      'Search text files in the workspace for a string (or a JavaScript regular expression with regex: true), ' +
      'like grep -rn. Returns "file:line: text" lines, paths relative to the workspace root. Skips .git, ' +
      `node_modules, .keel, symbolic links, binary files and files over ${SEARCH_FILES_MAX_FILE_BYTES} bytes; ` +
      `only the first ${SEARCH_FILES_MAX_LINE_CHARS} characters of a line are searched. Narrow with path and glob.`,
    schema: z.object({
      pattern: z
        .string()
        .min(1)
        .max(1_000)
        .describe('Text to find, or a regular expression when regex is true; matched within single lines'),
      regex: z.boolean().default(false).describe('Treat pattern as a JavaScript regular expression'),
      path: z
        .string()
        .default('.')
        .describe('Directory to search recursively, or one file; relative to the workspace root'),
      glob: z
        .string()
        .max(200)
        .optional()
        .describe('Only files whose name matches, e.g. "*.ts" or "*.{ts,tsx}"'),
      caseSensitive: z.boolean().default(true).describe('Match letter case exactly'),
      maxResults: z
        .number()
        .int()
        .min(1)
        .max(SEARCH_FILES_MAX_RESULTS)
        .default(100)
        .describe('Most matching lines to return'),
    }),
    readOnly: true,
    timeoutSeconds: 60,
    execute(input, context) {
      const { signal } = context;
      return inWorkspace(open, async (workspace) => {
        const scan = createLineScanner(compilePattern(input.pattern, input.regex, input.caseSensitive), {
          maxLineChars: SEARCH_FILES_MAX_LINE_CHARS,
          shownChars: SEARCH_FILES_SHOWN_LINE_CHARS,
          budgetMs: SEARCH_FILES_REGEX_BUDGET_MS,
        });
        const matchesName = input.glob === undefined ? () => true : compileFileNameGlob(input.glob);
        const search = new Search(
          scan,
          input.regex,
          input.maxResults,
          signal,
          (details) => context.heartbeat(details),
          matchesName,
        );
        const start = workspace.relative(await workspace.resolve(input.path));
        const info = await lstat(path.join(workspace.root, start));
        if (info.isDirectory()) {
          const directory = await workspace.openDirectory(start);
          try {
            await search.tree(directory);
          } finally {
            await directory.close();
          }
        } else if (info.isFile()) {
          await search.explicitFile(workspace, start);
        } else {
          throw new ToolError(`${input.path} is not a regular file but ${describeFileKind(info)}`);
        }
        return search.report(input.pattern, input.path);
      });
    },
  });
}

/** The state of one search: what was found, skipped, and why it stopped early. */
class Search {
  readonly #lines: string[] = [];
  #chars = 0;
  #files = 0;
  #stopped: string | undefined;
  readonly #skipped = { large: 0, binary: 0, unreadable: 0 };

  constructor(
    private readonly scan: LineScanner,
    /** Whether the pattern is a regex (else literal text), for the notes about a scan that was stopped. */
    private readonly regex: boolean,
    private readonly maxResults: number,
    private readonly signal: AbortSignal,
    private readonly heartbeat: (details?: unknown) => void,
    private readonly matchesName: (fileName: string) => boolean,
  ) {}

  /** How each file is read: bounded, and abandoned on cancellation. */
  get readOptions(): OpenFileOptions {
    return { maxBytes: SEARCH_FILES_MAX_FILE_BYTES, tool: 'search_files', signal: this.signal };
  }

  /** Searches a held directory depth-first, in name order; subdirectories are opened through it. */
  async tree(directory: WorkspaceDirectory): Promise<void> {
    this.signal.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await directory.entries();
    } catch (error) {
      if (!this.isSkippable(error)) throw error;
      this.#skipped.unreadable++;
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      await this.files(directory, batch);
      batch = [];
    };
    for (const entry of entries) {
      if (this.#stopped !== undefined) return;
      if (entry.isDirectory()) {
        if (IGNORED_DIRECTORIES.has(entry.name)) continue;
        await flush();
        if (this.#stopped === undefined) await this.subdirectory(directory, entry.name);
      } else if (entry.isFile() && this.matchesName(entry.name)) {
        batch.push(entry.name);
        if (batch.length === READ_AHEAD) await flush();
      }
    }
    await flush();
  }

  /** Searches one file the model named itself: refusals fail the search instead of skipping the file. */
  async explicitFile(workspace: Workspace, relative: string): Promise<void> {
    const [read] = await Promise.allSettled([workspace.readFile(relative, this.readOptions)]);
    if (read !== undefined) await this.file(relative, read, { explicit: true });
  }

  private async subdirectory(parent: WorkspaceDirectory, name: string): Promise<void> {
    let directory: WorkspaceDirectory;
    try {
      directory = await parent.openDirectory(name);
    } catch (error) {
      if (!this.isSkippable(error)) throw error;
      this.#skipped.unreadable++;
      return;
    }
    try {
      await this.tree(directory);
    } finally {
      await directory.close();
    }
  }

  /** Reads files of one directory several at a time (the reads wait on the disk, not on us), then scans them in order. */
  private async files(directory: WorkspaceDirectory, names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    this.signal.throwIfAborted();
    const reads = await Promise.allSettled(names.map((name) => directory.readFile(name, this.readOptions)));
    for (const [index, name] of names.entries()) {
      const read = reads[index];
      if (this.#stopped !== undefined || read === undefined) return;
      await this.file(directory.relativePath === '.' ? name : `${directory.relativePath}/${name}`, read, {
        explicit: false,
      });
    }
  }

  /** Scans one file that was read (or failed to be), on a scan thread. */
  private async file(
    shown: string,
    read: PromiseSettledResult<{ bytes: Buffer }>,
    { explicit }: { explicit: boolean },
  ): Promise<void> {
    if (this.#files >= SEARCH_FILES_MAX_FILES) {
      this.#stopped = `searched ${SEARCH_FILES_MAX_FILES} files; narrow path or glob`;
      return;
    }
    this.#files++;
    if (this.#files % 100 === 0) this.heartbeat({ filesSearched: this.#files });
    if (read.status === 'rejected') {
      const error: unknown = read.reason;
      if (explicit || !this.isSkippable(error)) throw error;
      if (error instanceof FileTooLargeError) this.#skipped.large++;
      else this.#skipped.unreadable++;
      return;
    }
    const { bytes } = read.value;
    if (looksBinary(bytes)) {
      if (explicit) throw new ToolError(`${shown} looks like a binary file; it was not searched`);
      this.#skipped.binary++;
      return;
    }
    const room = this.maxResults - this.#lines.length;
    let matches: LineMatch[];
    try {
      matches = await this.scan(bytes, room + 1, this.signal);
    } catch (error) {
      const what = this.regex ? 'the regex' : 'the search';
      if (error instanceof ScanTimeoutError) {
        this.#stopped =
          `${what} ran for more than ${SEARCH_FILES_REGEX_BUDGET_MS} ms on ${shown} and was stopped; ` +
          (this.regex
            ? 'it probably backtracks catastrophically (nested quantifiers like (a+)+ or (.*)*): simplify it'
            : 'narrow path or glob');
        return;
      }
      if (error instanceof ScanFailedError) {
        this.#stopped = `${what} failed on ${shown} (${error.message}) and was stopped${this.regex ? ': simplify it' : ''}`;
        return;
      }
      throw error;
    }
    for (const match of matches) {
      if (this.#lines.length >= this.maxResults) {
        this.#stopped = `reached maxResults (${this.maxResults} lines); narrow path or glob, or raise maxResults (at most ${SEARCH_FILES_MAX_RESULTS})`;
        return;
      }
      const line = `${shown}:${match.line}: ${match.text}`;
      if (this.#chars + line.length + 1 > SEARCH_FILES_MAX_OUTPUT_CHARS) {
        this.#stopped = `the output reached ${SEARCH_FILES_MAX_OUTPUT_CHARS} characters; narrow path or glob`;
        return;
      }
      this.#lines.push(line);
      this.#chars += line.length + 1;
    }
  }

  /** The matching lines, then why the search stopped early and what it skipped, if anything. */
  report(pattern: string, requested: string): string {
    const notes: string[] = [];
    if (this.#stopped !== undefined) notes.push(`… stopped early: ${this.#stopped}`);
    const { large, binary, unreadable } = this.#skipped;
    const skipped = [
      large > 0 ? `${large} over ${SEARCH_FILES_MAX_FILE_BYTES} bytes` : '',
      binary > 0 ? `${binary} binary` : '',
      unreadable > 0 ? `${unreadable} unreadable` : '',
    ].filter((part) => part !== '');
    if (skipped.length > 0) notes.push(`(skipped files: ${skipped.join(', ')})`);
    if (this.#lines.length === 0) {
      const searched = `${this.#files} ${this.#files === 1 ? 'file' : 'files'} searched`;
      return [`No matches for ${JSON.stringify(pattern)} in ${requested} (${searched})`, ...notes].join('\n');
    }
    return [...this.#lines, ...notes].join('\n');
  }

  /** Refusals and system errors on one of many files skip it; cancellation and bugs do not. */
  private isSkippable(error: unknown): boolean {
    if (this.signal.aborted) return false;
    return error instanceof WorkspaceError || errorCode(error) !== undefined;
  }
}
