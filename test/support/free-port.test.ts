import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';

describe('freePort', () => {
  it('hands out distinct ports below the kernel ephemeral range, which bind(0) never hands out', async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/u);
    const ports = [];
    for (let index = 0; index < 20; index += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(Number(low));
    }
  });
});
