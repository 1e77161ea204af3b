/**
 * What the file tools never change unless the operator says otherwise (`KEEL_WORKSPACE_PROTECT`):
 * every `.git` (git runs code named in its config, hooks and attributes, and a `.git` file points git
 * at another repository) and `.keel`, where `keel run` keeps the local server's database.
 */
export const DEFAULT_WORKSPACE_PROTECT: readonly string[] = ['.git', '.keel'];

/** A protection pattern, checked and split: `segments` match path parts from the root when `anchored`. */
interface ProtectPattern {
  /** The pattern as the operator wrote it, for messages. */
  source: string;
  /** Normalized parts; `**` matches any number of path parts, `*` and `?` work within one. */
  segments: string[];
  /** Added by Keel rather than configured (the directory a `.git` link points to): not in {@link WorkspaceProtection.sources}. */
  derived?: boolean;
}

/**
 * Checks one pattern of `KEEL_WORKSPACE_PROTECT`, gitignore-like: a workspace-relative path with `/`
 * between parts; without a `/` (other than a trailing one) it matches a part at any depth (`.git`),
 * with one it is anchored at the root (`data/runs`, `/.keel`); `*` and `?` match within a part and
 * `**` any number of parts. Returns a reason when it is not usable.
 */
export function protectPatternProblem(pattern: string): string | undefined {
  return parsePattern(pattern).problem;
}

function parsePattern(raw: string): { pattern?: ProtectPattern; problem?: string } {
  const source = raw.trim();
  if (source === '') return { problem: 'an empty pattern' };
  if (source.includes('\0')) return { problem: `${JSON.stringify(source)} contains a NUL byte` };
  if (source.includes('\\')) {
    return { problem: `${JSON.stringify(source)} contains "\\"; separate path parts with "/"` };
  }
  if (/^[a-zA-Z]:/.test(source) || source.startsWith('~')) {
    return { problem: `${JSON.stringify(source)} is not relative to the workspace root` };
  }
  const trimmed = source.replace(/\/+$/, '');
  const anchored = trimmed.startsWith('/') || trimmed.includes('/');
  const parts = trimmed.replace(/^\//, '').split('/');
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..') {
      return {
        problem: `${JSON.stringify(source)} has an empty, "." or ".." part; write a plain relative path`,
      };
    }
    if (part.includes('**') && part !== '**') {
      return { problem: `${JSON.stringify(source)} uses "**" inside a part; it must be a whole part` };
    }
  }
  const segments = parts.map((part) => normalizeName(part));
  return { pattern: { source, segments: anchored ? segments : ['**', ...segments] } };
}

/**
 * The protected paths of one workspace. Paths are compared part by part after the folding that
 * case-insensitive file systems do (and git does when it guards `.git`): Unicode NFC, lower case,
 * code points HFS+ ignores, trailing dots and spaces (Windows drops them), and `git~1`, the short
 * name of `.git` on Windows. A path is protected when it or any directory above it matches.
 */
export class WorkspaceProtection {
  private constructor(private readonly patterns: readonly ProtectPattern[]) {}

  /** Protection by `patterns` (see {@link protectPatternProblem}); throws on an unusable one. */
  static of(patterns: readonly string[]): WorkspaceProtection {
    return new WorkspaceProtection(
      patterns.map((raw) => {
        const { pattern, problem } = parsePattern(raw);
        if (pattern === undefined) throw new Error(`Unusable protection pattern: ${problem}`);
        return pattern;
      }),
    );
  }

  /** The patterns, as given. */
  get sources(): string[] {
    return this.patterns.filter((pattern) => pattern.derived !== true).map((pattern) => pattern.source);
  }

  /**
   * This protection plus the exact workspace-relative directory `relative` (no wildcards), reported
   * as protected by `source`: for a repository's real git directory that a `.git` link points to.
   */
  including(relative: string, source: string): WorkspaceProtection {
    const segments = relative
      .split(/[/\\]/)
      .filter((part) => part !== '' && part !== '.')
      // A literal * or ? in a name becomes a one-character wildcard: at worst a sibling is protected too.
      .map((part) => normalizeName(part).replace(/[*?]/g, '?'));
    return new WorkspaceProtection([...this.patterns, { source, segments, derived: true }]);
  }

  /**
   * The pattern that protects a workspace-relative path (parts split by the platform separator or
   * `/`), or undefined when nothing does. The root itself is never protected.
   */
  protecting(relativePath: string): string | undefined {
    const parts = relativePath
      .split(/[/\\]/)
      .filter((part) => part !== '' && part !== '.')
      .map((part) => normalizeName(part))
      .map((part) => (part === 'git~1' ? '.git' : part));
    if (parts.length === 0 || parts.includes('..')) return undefined;
    return this.patterns.find((pattern) => matchesPrefix(pattern.segments, parts))?.source;
  }
}

/** Whether the pattern matches `parts` or some leading run of them (a directory above the path). */
function matchesPrefix(segments: readonly string[], parts: readonly string[]): boolean {
  const seen = new Set<string>();
  const visit = (s: number, p: number): boolean => {
    if (s === segments.length) return p > 0;
    const key = `${s}:${p}`;
    if (seen.has(key)) return false;
    seen.add(key);
    if (segments[s] === '**') return visit(s + 1, p) || (p < parts.length && visit(s, p + 1));
    return p < parts.length && matchesPart(segments[s]!, parts[p]!) && visit(s + 1, p + 1);
  };
  return visit(0, 0);
}

/** Wildcard parts compiled once: every write and every sandboxed command checks the same few patterns. */
const compiledParts = new Map<string, RegExp>();

/** One pattern part against one path part: `*` any run of characters, `?` exactly one. */
function matchesPart(segment: string, part: string): boolean {
  if (!segment.includes('*') && !segment.includes('?')) return segment === part;
  let compiled = compiledParts.get(segment);
  if (compiled === undefined) {
    const expression = [...segment]
      .map((character) => (character === '*' ? '.*' : character === '?' ? '.' : escapeRegExp(character)))
      .join('');
    compiled = new RegExp(`^${expression}$`, 'su');
    compiledParts.set(segment, compiled);
  }
  return compiled.test(part);
}

function escapeRegExp(character: string): string {
  return /[\\^$.|+()[\]{}]/.test(character) ? `\\${character}` : character;
}

/** Code points HFS+ leaves out of names, so `.g\u200cit` is `.git` there (as git's `is_hfs_dotgit`). */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/** The form two names share when a case-insensitive, normalizing file system takes them for one. */
function normalizeName(name: string): string {
  return name
    .normalize('NFC')
    .replace(HFS_IGNORED, '')
    .toLowerCase()
    .replace(/[. ]+$/u, (tail) =>
      // A name made only of dots stays itself ("..." is not ""), only a trailing run is dropped.
      tail.length === name.length ? tail : '',
    );
}
