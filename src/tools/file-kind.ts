import type { Stats } from 'node:fs';

/** What a file that is not a regular file is, in words the model understands ("a named pipe"). */
export function describeFileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  return stats.isFile() ? 'a regular file' : 'a special file';
}
