import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The lines of a screen that are a status line (they start with a spinner frame). */
export function statusLines(screen: string): string[] {
  return screen.split('\n').filter((line) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /u.test(line));
}

/**
 * Keeps captured screens as `<KEEL_SCREENS_DIR>/<name>.txt` when that variable is set (to show what a
 * person sees, e.g. in a closing note), each under a heading saying when it was taken; does nothing
 * otherwise, so CI output stays as it is.
 */
export async function saveScreen(
  name: string,
  ...screens: Array<[when: string, screen: string]>
): Promise<void> {
  const directory = process.env.KEEL_SCREENS_DIR;
  if (!directory) return;
  await mkdir(directory, { recursive: true });
  const text = screens.map(([when, screen]) => `----- ${when} -----\n${screen}\n`).join('\n');
  await writeFile(path.join(directory, `${name}.txt`), text);
}
