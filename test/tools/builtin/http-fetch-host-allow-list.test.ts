import { describe, expect, it } from 'vitest';
import {
  HostPatternError,
  parseHostAllowList,
} from '../../../src/tools/builtin/http-fetch/host-allow-list.js';

describe('parseHostAllowList', () => {
  it('normalises entries as the URL parser does: case, punycode, IP spellings, trailing dot', () => {
    const list = parseHostAllowList([
      'Docs.Example.COM',
      '*.Example.org:8443',
      'Bücher.example',
      '0x7f000001',
      '[0:0::1]:8080',
      'api.test.',
    ]);
    expect(list.entries).toEqual([
      'docs.example.com',
      '*.example.org:8443',
      'xn--bcher-kva.example',
      '127.0.0.1',
      '[::1]:8080',
      'api.test',
    ]);
  });

  it('matches exact hosts on any port, and host:port entries on that port only', () => {
    const list = parseHostAllowList([
      'docs.example.com',
      'api.test:8080',
      'plain.test:80',
      'secure.test:443',
    ]);
    const allowed = (url: string): boolean => list.allows(new URL(url));
    expect(allowed('https://DOCS.example.com/guide')).toBe(true);
    expect(allowed('http://docs.example.com:9999/')).toBe(true);
    expect(allowed('http://docs.example.com./')).toBe(true);
    expect(allowed('http://api.test:8080/')).toBe(true);
    expect(allowed('http://api.test/')).toBe(false);
    expect(allowed('http://api.test:8081/')).toBe(false);
    expect(allowed('http://plain.test/')).toBe(true);
    expect(allowed('https://plain.test/')).toBe(false);
    expect(allowed('https://secure.test/')).toBe(true);
    expect(allowed('http://example.com/')).toBe(false);
    expect(allowed('http://docs.example.com.evil.test/')).toBe(false);
  });

  it('matches *.domain against subdomains at any depth, never the domain or look-alikes', () => {
    const list = parseHostAllowList(['*.example.com']);
    const allowed = (url: string): boolean => list.allows(new URL(url));
    expect(allowed('http://docs.example.com/')).toBe(true);
    expect(allowed('http://a.b.example.com/')).toBe(true);
    expect(allowed('http://example.com/')).toBe(false);
    expect(allowed('http://evil-example.com/')).toBe(false);
    expect(allowed('http://notexample.com/')).toBe(false);
    expect(allowed('http://example.com.evil.test/')).toBe(false);
  });

  it('matches IP literals in every spelling the URL parser accepts', () => {
    const list = parseHostAllowList(['127.0.0.1', '[::1]']);
    for (const url of ['http://127.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://[0::1]/']) {
      expect(list.allows(new URL(url)), url).toBe(true);
    }
    expect(list.allows(new URL('http://127.0.0.2/'))).toBe(false);
  });

  it('refuses entries that are not a host with an optional port', () => {
    const refused: Array<[string, string]> = [
      ['*', 'give a host name'],
      ['  ', 'give a host name'],
      ['*.', 'not a valid host name'],
      ['http://docs.example.com', 'without scheme or path'],
      ['docs.example.com/path', 'without scheme or path'],
      ['user@docs.example.com', 'without scheme or path'],
      ['*.*.example.com', 'without scheme or path'],
      ['*.192.168.0.1', 'a wildcard cannot apply to an IP address'],
      ['*.[::1]', 'a wildcard cannot apply to an IP address'],
      ['docs.example.com:0', 'the port must be 1-65535'],
      ['docs.example.com:65536', 'the port must be 1-65535'],
      ['fe80::1', 'not a valid host name'],
      ['exa mple.com', 'without scheme or path'],
    ];
    for (const [entry, message] of refused) {
      expect(() => parseHostAllowList([entry]), entry).toThrow(HostPatternError);
      expect(() => parseHostAllowList([entry]), entry).toThrow(message);
    }
  });
});
