import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Whether this process is in its terminal's foreground process group. A background job (`keel
 * worker &`) that changes the terminal's mode or reads from it is stopped by the terminal driver
 * (SIGTTOU/SIGTTIN), so it must leave the terminal alone. When it cannot be told, the answer is no:
 * the terminal keeps its normal mode and Ctrl-C stays a signal, which is safe.
 */
export function inForeground(): boolean {
  try {
    // /proc/self/stat: "pid (comm) state ppid pgrp session tty_nr tpgid ..."; comm may hold spaces
    // and parentheses, so the fields are counted after its last ')'.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return isForeground(fields[2], fields[5]);
  } catch {
    // No /proc (macOS, BSD): ps knows both numbers.
  }
  try {
    const output = execFileSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [pgrp, tpgid] = output.trim().split(/\s+/u);
    return isForeground(pgrp, tpgid);
  } catch {
    return false;
  }
}

function isForeground(pgrp: string | undefined, tpgid: string | undefined): boolean {
  const group = Number(pgrp);
  return Number.isInteger(group) && group > 0 && group === Number(tpgid);
}
