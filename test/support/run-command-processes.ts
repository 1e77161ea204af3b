import { readdirSync, readFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';

/**
 * A number unique to one test, for `sleep <marker>`: processes a test starts carry it in their command
 * line, so the test can look for them on the host afterwards, whatever pid namespace they were in.
 */
export function sleepMarker(): string {
  return `${randomInt(100_000, 999_999)}.${randomInt(100_000_000, 999_999_999)}`;
}

/** Host pids of living processes whose command line contains `marker` (zombies are dead: not counted). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!commandLine.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? ''))
        found.push(Number(entry));
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}
