import { statfs } from 'node:fs/promises';

/** How often the free space of a running command's workspace filesystem is read. */
export const DISK_WATCH_INTERVAL_MS = 100;

/** A watch on how much free space one filesystem loses while a command runs. */
export interface DiskWatch {
  /** Resolves when the filesystem has lost more than the cap since the watch began; never rejects. */
  exceeded: Promise<void>;
  /** Whether it did. */
  hit(): boolean;
  /** Ends the watch. */
  stop(): void;
}

/**
 * Watches the filesystem that holds `directory`: once its free space (for an unprivileged user) has
 * shrunk by more than `capBytes` since the watch began, `exceeded` resolves, so that the command can
 * be stopped. This caps how much a command can grow the workspace's disk use, to within what it
 * writes in {@link DISK_WATCH_INTERVAL_MS} past the cap; it is no quota (Linux has none that a
 * worker can set on a directory without a filesystem made for it): what others write to the same
 * filesystem meanwhile counts too, and what the command wrote stays.
 */
export async function watchDisk(directory: string, capBytes: number): Promise<DiskWatch> {
  const free = async (): Promise<number | undefined> => {
    const stats = await statfs(directory).catch(() => undefined);
    return stats === undefined ? undefined : stats.bavail * stats.bsize;
  };
  const start = await free();
  let hit = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let signal!: () => void;
  const exceeded = new Promise<void>((resolve) => (signal = resolve));
  const check = async (): Promise<void> => {
    const now = await free();
    if (stopped) return;
    if (start !== undefined && now !== undefined && start - now > capBytes) {
      hit = true;
      signal();
      return;
    }
    schedule();
  };
  // check() cannot reject (a failed statfs reads as unknown), but a rejection would only end the watch.
  const schedule = (): void => {
    timer = setTimeout(() => {
      check().catch(() => undefined);
    }, DISK_WATCH_INTERVAL_MS);
  };
  if (start !== undefined) schedule();
  return {
    exceeded,
    hit: () => hit,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
