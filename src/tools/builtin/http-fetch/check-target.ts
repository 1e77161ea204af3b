import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { ToolError } from '../../tool-error.js';
import { nonPublicReason } from './classify-address.js';
import type { HostAllowList } from './host-allow-list.js';

/** Resolves a host name to all its addresses, as `dns.promises.lookup(host, { all: true })` does. */
export type HostLookup = (hostname: string) => Promise<readonly LookupAddress[]>;

/** What decides whether a URL may be fetched. */
export interface TargetPolicy {
  allowList: HostAllowList;
  allowPrivateAddresses: boolean;
  lookup: HostLookup;
}

/** The model's URL, parsed; refused when it is not an absolute URL. */
export function parseUrl(text: string): URL {
  try {
    return new URL(text.trim());
  } catch {
    throw new ToolError(
      `${JSON.stringify(text)} is not an absolute URL; give one like https://example.com/page`,
    );
  }
}

/**
 * Refuses a URL that http_fetch may not request: a scheme other than http(s), a user name or
 * password, or a host (and port) not on the allow-list. `redirectedFrom` names the URL whose
 * response pointed here, for the message.
 */
export function checkUrl(url: URL, allowList: HostAllowList, redirectedFrom?: URL): void {
  const refuse = (why: string): never => {
    throw new ToolError(
      redirectedFrom === undefined ? why : `${redirectedFrom.href} redirected to ${url.href}. ${why}`,
    );
  };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    refuse(`Only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    refuse('URLs with a user name or password are refused: http_fetch does not send credentials.');
  }
  if (!allowList.allows(url)) {
    refuse(
      `${url.host} is not on the http_fetch allow-list, so it was not contacted. ` +
        `Allowed hosts: ${allowList.entries.join(', ')} (*.domain means its subdomains). ` +
        'An operator can add hosts to the allow-list.',
    );
  }
}

/**
 * The addresses to connect to for `url`: the IP literal itself, or every address its host resolves
 * to. Unless private addresses are allowed, refuses when any of them is not a public internet address
 * (loopback, private, link-local, CGNAT, multicast …), before anything connects.
 */
export async function checkedAddresses(
  url: URL,
  policy: TargetPolicy,
  signal: AbortSignal,
  redirectedFrom?: URL,
): Promise<LookupAddress[]> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const family = isIP(host);
  const addresses = family === 0 ? await resolve(host, policy.lookup, signal) : [{ address: host, family }];
  if (policy.allowPrivateAddresses) return addresses;
  for (const { address } of addresses) {
    const reason = nonPublicReason(address);
    if (reason === undefined) continue;
    const subject = family === 0 ? `${url.hostname} resolves to ${address}, which is` : `${address} is`;
    const why =
      `${subject} not a public internet address (${reason}); http_fetch does not connect to ` +
      'loopback, private or link-local networks. An operator can allow them with the http_fetch ' +
      'setting allowPrivateAddresses.';
    throw new ToolError(
      redirectedFrom === undefined ? why : `${redirectedFrom.href} redirected to ${url.href}. ${why}`,
    );
  }
  return addresses;
}

async function resolve(host: string, lookup: HostLookup, signal: AbortSignal): Promise<LookupAddress[]> {
  let addresses: readonly LookupAddress[];
  try {
    addresses = await untilAborted(lookup(host), signal);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (signal.aborted || typeof code !== 'string') throw error;
    throw new ToolError(`Could not resolve ${host} (${code})`);
  }
  const usable = addresses.filter((entry) => entry.family === 4 || entry.family === 6);
  if (usable.length === 0) throw new ToolError(`Could not resolve ${host}: it has no addresses`);
  return usable.map(({ address, family }) => ({ address, family }));
}

/** `promise`, or the signal's reason as soon as it aborts: `dns.lookup` itself cannot be cancelled. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
