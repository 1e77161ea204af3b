import type { Logger } from '../../src/logger.js';

const ignore = (): void => undefined;

/** A log that drops everything. */
export const silentLogger: Logger & { log: () => void; trace: () => void } = {
  log: ignore,
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
};

/** A log that keeps every entry, for asserting what reached the worker log. */
export class RecordingLogger implements Logger {
  readonly entries: Array<{ level: string; message: string; meta?: Record<string, unknown> }> = [];
  debug(message: string, meta?: Record<string, unknown>): void {
    this.record('debug', message, meta);
  }
  info(message: string, meta?: Record<string, unknown>): void {
    this.record('info', message, meta);
  }
  warn(message: string, meta?: Record<string, unknown>): void {
    this.record('warn', message, meta);
  }
  error(message: string, meta?: Record<string, unknown>): void {
    this.record('error', message, meta);
  }
  private record(level: string, message: string, meta: Record<string, unknown> | undefined): void {
    this.entries.push({ level, message, ...(meta ? { meta } : {}) });
  }
}
