import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';
import { listensOn } from './listening-process.js';

describe('listensOn', () => {
  it('tells the process that listens on a port from one that does not', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => other.once('spawn', resolve));
      expect(await listensOn(process.pid, port)).toBe(true);
      expect(await listensOn(other.pid!, port)).toBe(false);
      expect(await listensOn(process.pid, await freePort())).toBe(false);
    } finally {
      other.kill('SIGKILL');
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
