import { isIPv4, isIPv6 } from 'node:net';

/** An address range that is not the public internet, with the words a refusal uses for it. */
interface Range {
  base: number[];
  prefix: number;
  label: string;
  cidr: string;
}

/** IPv4 ranges that reach the host itself, a private network, or nothing routable. */
const IPV4_RANGES: Range[] = [
  v4('0.0.0.0', 8, 'unspecified ("this network")'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'carrier-grade NAT (shared)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local (cloud metadata lives here)'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved (IETF protocol assignments)'),
  v4('192.0.2.0', 24, 'reserved (documentation)'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved (benchmarking)'),
  v4('198.51.100.0', 24, 'reserved (documentation)'),
  v4('203.0.113.0', 24, 'reserved (documentation)'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved (including broadcast)'),
];

/** IPv6 ranges checked after the IPv4-embedding prefixes below; the first match names the range. */
const IPV6_RANGES: Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('64:ff9b:1::', 48, 'reserved (local-use NAT64)'),
  // The rest of ::/8 holds IPv4-compatible and translated forms that no public host uses.
  v6('::', 8, 'reserved'),
  v6('100::', 64, 'reserved (discard-only)'),
  v6('2001::', 32, 'reserved (Teredo tunnel)'),
  v6('2001:db8::', 32, 'reserved (documentation)'),
  v6('fc00::', 7, 'unique-local (private)'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'site-local (deprecated, private)'),
  v6('ff00::', 8, 'multicast'),
];

/**
 * Why `address` is not a public internet address ("loopback, 127.0.0.0/8"), or undefined if it is
 * one. IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) are judged by that IPv4 address. Anything that is not an IP address is refused too.
 */
export function nonPublicReason(address: string): string | undefined {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(text)) return ipv4Reason(ipv4Bytes(text));
  const groups = ipv6Groups(text);
  if (groups === undefined) return 'not an IP address';
  const bytes = groups.flatMap((group) => [group >> 8, group & 0xff]);
  const embedded = embeddedIpv4(bytes);
  if (embedded !== undefined) {
    const reason = ipv4Reason(embedded.address);
    return reason === undefined ? undefined : `${reason}, as ${embedded.form}`;
  }
  return describe(IPV6_RANGES.find((range) => contains(range, bytes)));
}

function ipv4Reason(bytes: number[]): string | undefined {
  return describe(IPV4_RANGES.find((range) => contains(range, bytes)));
}

function describe(range: Range | undefined): string | undefined {
  return range === undefined ? undefined : `${range.label}, ${range.cidr}`;
}

function embeddedIpv4(bytes: number[]): { form: string; address: number[] } | undefined {
  const zeros = (from: number, to: number): boolean => bytes.slice(from, to).every((byte) => byte === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return { form: 'IPv4-mapped IPv6', address: bytes.slice(12) };
  }
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) {
    return { form: 'NAT64', address: bytes.slice(12) };
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { form: '6to4', address: bytes.slice(2, 6) };
  return undefined;
}

function contains(range: Range, bytes: number[]): boolean {
  if (range.base.length !== bytes.length) return false;
  for (let bit = 0; bit < range.prefix; bit += 8) {
    const width = Math.min(8, range.prefix - bit);
    const mask = (0xff << (8 - width)) & 0xff;
    const index = bit / 8;
    if (((bytes[index] ?? 0) & mask) !== ((range.base[index] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv4Bytes(text: string): number[] {
  return text.split('.').map(Number);
}

/** The eight 16-bit groups of an IPv6 address (a zone `%eth0` ignored), or undefined if it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const text = address.split('%')[0] ?? '';
  if (!isIPv6(text)) return undefined;
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((piece) => {
          if (!piece.includes('.')) return [parseInt(piece, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(piece);
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = text.indexOf('::');
  if (gap === -1) return parse(text);
  const head = parse(text.slice(0, gap));
  const tail = parse(text.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function v4(base: string, prefix: number, label: string): Range {
  return { base: ipv4Bytes(base), prefix, label, cidr: `${base}/${prefix}` };
}

function v6(base: string, prefix: number, label: string): Range {
  const groups = ipv6Groups(base) ?? [];
  return {
    base: groups.flatMap((group) => [group >> 8, group & 0xff]),
    prefix,
    label,
    cidr: `${base}/${prefix}`,
  };
}
