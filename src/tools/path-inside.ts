import path from 'node:path';

/** Whether the absolute, normalised path `candidate` is `root` itself or lies below it. */
export function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root + path.sep);
}
