import { readdir, readFile } from 'node:fs/promises';

/** A process found in /proc: its pid and the fields of its stat line after the command name. */
export interface ProcessEntry {
  pid: number;
  /** `state ppid pgrp session …`: the command name, which may hold spaces and parentheses, is skipped. */
  fields: string[];
}

/**
 * The living processes in /proc that `keep` accepts (undefined when /proc cannot be read), and
 * whether the look was complete: it is not when an entry could not be read for a reason other than
 * its process having ended (EMFILE, say). Zombies do not count: they are dead, and an init that reaps
 * orphans late would otherwise hold us up.
 */
export async function livingProcesses(
  keep: (entry: ProcessEntry) => boolean | Promise<boolean>,
): Promise<{ processes: ProcessEntry[]; complete: boolean } | undefined> {
  let names: string[];
  try {
    names = await readdir('/proc');
  } catch {
    return undefined;
  }
  let complete = true;
  const found = await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        try {
          const line = await readFile(`/proc/${name}/stat`, 'utf8');
          const entry = { pid: Number(name), fields: line.slice(line.lastIndexOf(')') + 2).split(' ') };
          if (entry.fields[0] === 'Z' || entry.fields[0] === 'X') return undefined;
          return (await keep(entry)) ? entry : undefined;
        } catch (error) {
          // ENOENT or ESRCH: it ended while we looked. Anything else leaves us unsure.
          const code = (error as NodeJS.ErrnoException).code;
          if (code !== 'ENOENT' && code !== 'ESRCH') complete = false;
          return undefined;
        }
      }),
  );
  return { processes: found.filter((entry): entry is ProcessEntry => entry !== undefined), complete };
}
