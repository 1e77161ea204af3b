import { describe, expect, it } from 'vitest';
import { nonPublicReason } from '../../../src/tools/builtin/http-fetch/classify-address.js';

describe('nonPublicReason', () => {
  it('names the range of every loopback, private, link-local, CGNAT and reserved IPv4 address', () => {
    const cases: Record<string, string> = {
      '0.0.0.0': 'unspecified ("this network"), 0.0.0.0/8',
      '0.255.1.2': 'unspecified ("this network"), 0.0.0.0/8',
      '10.0.0.1': 'private, 10.0.0.0/8',
      '100.64.0.1': 'carrier-grade NAT (shared), 100.64.0.0/10',
      '100.127.255.255': 'carrier-grade NAT (shared), 100.64.0.0/10',
      '127.0.0.1': 'loopback, 127.0.0.0/8',
      '127.255.255.254': 'loopback, 127.0.0.0/8',
      '169.254.169.254': 'link-local (cloud metadata lives here), 169.254.0.0/16',
      '172.16.0.1': 'private, 172.16.0.0/12',
      '172.31.255.255': 'private, 172.16.0.0/12',
      '192.0.0.170': 'reserved (IETF protocol assignments), 192.0.0.0/24',
      '192.168.1.1': 'private, 192.168.0.0/16',
      '198.18.0.1': 'reserved (benchmarking), 198.18.0.0/15',
      '203.0.113.9': 'reserved (documentation), 203.0.113.0/24',
      '224.0.0.251': 'multicast, 224.0.0.0/4',
      '255.255.255.255': 'reserved (including broadcast), 240.0.0.0/4',
    };
    for (const [address, reason] of Object.entries(cases))
      expect(nonPublicReason(address), address).toBe(reason);
  });

  it('passes public IPv4 addresses, including the neighbours of blocked ranges', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.215.14',
      '172.15.255.255',
      '172.32.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '11.0.0.0',
      '223.255.255.255',
    ]) {
      expect(nonPublicReason(address), address).toBeUndefined();
    }
  });

  it('names the range of non-public IPv6 addresses, zone ids and brackets allowed', () => {
    const cases: Record<string, string> = {
      '::': 'unspecified, ::/128',
      '::1': 'loopback, ::1/128',
      '[::1]': 'loopback, ::1/128',
      '0:0:0:0:0:0:0:1': 'loopback, ::1/128',
      '::127.0.0.1': 'reserved, ::/8',
      'fc00::1': 'unique-local (private), fc00::/7',
      'fdab:cdef::1': 'unique-local (private), fc00::/7',
      'fe80::1%eth0': 'link-local, fe80::/10',
      'febf::1': 'link-local, fe80::/10',
      'fec0::1': 'site-local (deprecated, private), fec0::/10',
      'ff02::1': 'multicast, ff00::/8',
      '2001:db8::1': 'reserved (documentation), 2001:db8::/32',
      '2001::1': 'reserved (Teredo tunnel), 2001::/32',
      '100::1': 'reserved (discard-only), 100::/64',
      '64:ff9b:1::1': 'reserved (local-use NAT64), 64:ff9b:1::/48',
    };
    for (const [address, reason] of Object.entries(cases))
      expect(nonPublicReason(address), address).toBe(reason);
  });

  it('judges IPv6 forms that carry an IPv4 address by that address', () => {
    expect(nonPublicReason('::ffff:127.0.0.1')).toBe('loopback, 127.0.0.0/8, as IPv4-mapped IPv6');
    expect(nonPublicReason('::ffff:7f00:1')).toBe('loopback, 127.0.0.0/8, as IPv4-mapped IPv6');
    expect(nonPublicReason('::ffff:a9fe:a9fe')).toBe(
      'link-local (cloud metadata lives here), 169.254.0.0/16, as IPv4-mapped IPv6',
    );
    expect(nonPublicReason('64:ff9b::10.0.0.1')).toBe('private, 10.0.0.0/8, as NAT64');
    expect(nonPublicReason('2002:c0a8:101::1')).toBe('private, 192.168.0.0/16, as 6to4');
    expect(nonPublicReason('::ffff:8.8.8.8')).toBeUndefined();
    expect(nonPublicReason('64:ff9b::808:808')).toBeUndefined();
    expect(nonPublicReason('2002:808:808::1')).toBeUndefined();
  });

  it('passes public IPv6 addresses', () => {
    for (const address of [
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '2001:4860:4860::8888',
      'fbff::1',
      'fe00::1',
    ]) {
      expect(nonPublicReason(address), address).toBeUndefined();
    }
  });

  it('refuses anything that is not an IP address', () => {
    for (const text of ['example.com', '', '127.1', '0x7f000001', '::ffff:999.0.0.1', '1.2.3.4.5']) {
      expect(nonPublicReason(text), text).toBe('not an IP address');
    }
  });
});
