import { afterEach, describe, expect, it } from 'vitest';
import { Terminal } from './terminal.js';

const opened: Terminal[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((terminal) => terminal.close()));
});

describe('Terminal (tmux pseudo-terminal)', () => {
  it('gives the program a TTY, shows its screen and its exit code', async () => {
    const terminal = await Terminal.start(
      [
        process.execPath,
        '-e',
        'console.log(`tty ${process.stdout.isTTY} ${process.stdout.columns}`); process.exit(4)',
      ],
      { env: { PATH: process.env.PATH ?? '' }, columns: 91 },
    );
    opened.push(terminal);
    expect(await terminal.exited()).toBe(4);
    expect(await terminal.scrollback()).toBe('tty true 91');
  });

  it('delivers Ctrl-C as SIGINT and typed lines to stdin', async () => {
    const program = [
      "process.on('SIGINT', () => console.log('got SIGINT'));",
      "process.stdin.setEncoding('utf8').on('data', (text) => { console.log(`read ${text.trim()}`); process.exit(0); });",
      "console.log('ready');",
    ].join(' ');
    const terminal = await Terminal.start([process.execPath, '-e', program], {
      env: { PATH: process.env.PATH ?? '' },
    });
    opened.push(terminal);
    await terminal.waitFor('ready');
    await terminal.press('C-c');
    await terminal.waitFor('got SIGINT');
    await terminal.type('hello');
    await terminal.press('Enter');
    expect(await terminal.waitFor('read hello')).toContain('got SIGINT');
    expect(await terminal.exited()).toBe(0);
  });
});
