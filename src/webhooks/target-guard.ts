import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard of webhook URLs (RELIABILITY.md §8.3). A receiver must be a public address:
 * loopback, private, link-local (cloud metadata), CGNAT, unique-local, multicast, reserved and
 * unspecified addresses are refused — IP literals in any spelling (the WHATWG parser turns
 * `0x7f000001`, `2130706433` or `127.1` into `127.0.0.1`), names that resolve to them, at
 * creation and again at every connection (DNS may change in between).
 */

export interface TargetPolicy {
  /** 127.0.0.0/8 and ::1 allowed too: tests and local development only. */
  readonly allowLoopback: boolean;
  /** `http:` allowed besides `https:`: tests and local development only. */
  readonly allowHttp: boolean;
  /** Ports a receiver may listen on (the scheme's default counts as 80 or 443). */
  readonly ports: readonly number[];
}

/** Why a target is refused; `code` is the guard's own, whatever the network would have said. */
export class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET';
  constructor(
    message: string,
    /** What rule it broke, for `errors[].code`. */
    readonly rule: 'url' | 'scheme' | 'credentials' | 'host' | 'port' | 'address',
  ) {
    super(message);
    this.name = 'BlockedTargetError';
  }
}

const MAX_HOSTNAME = 253;

/** The address as ipaddr.js ranges it, IPv4-mapped IPv6 (`::ffff:10.0.0.1`) unwrapped. */
function rangeOf(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  }
  return parsed.range();
}

/** Only global unicast addresses, plus loopback when the policy allows it. */
export function isAllowedAddress(address: string, policy: TargetPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  const range = rangeOf(address);
  return range === 'unicast' || (policy.allowLoopback && range === 'loopback');
}

/** The host of a URL as an address when it is an IP literal (`[::1]` unbracketed). */
function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return ipaddr.isValid(host) ? host : undefined;
}

/**
 * Everything that can be checked without DNS: scheme, credentials, host name, port, and the
 * address itself when the host is a literal (a connection's lookup never sees literals).
 */
export function checkTarget(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedTargetError('is not an absolute URL', 'url');
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new BlockedTargetError(`must use ${schemes.join(' or ').replaceAll(':', '')}`, 'scheme');
  }
  if (url.username !== '' || url.password !== '') {
    throw new BlockedTargetError('must not carry credentials', 'credentials');
  }
  if (url.hostname === '' || url.hostname.length > MAX_HOSTNAME) {
    throw new BlockedTargetError(
      `must have a host name of at most ${MAX_HOSTNAME} characters`,
      'host',
    );
  }
  const literal = literalAddress(url);
  if (literal !== undefined && !isAllowedAddress(literal, policy)) {
    throw new BlockedTargetError(`points to a non-public address (${literal})`, 'address');
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const loopback = literal !== undefined && rangeOf(literal) === 'loopback';
  if (!policy.ports.includes(port) && !loopback) {
    throw new BlockedTargetError(`must use port ${policy.ports.join(' or ')}`, 'port');
  }
  return url;
}

/** Resolves a host name the way a connection will and refuses it if any address is not public. */
export async function checkResolvedTarget(url: URL, policy: TargetPolicy): Promise<void> {
  if (literalAddress(url) !== undefined) return;
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
    guardedLookup(policy)(url.hostname, { all: true }, (error, result) => {
      if (error) reject(error);
      else resolve(result as unknown as LookupAddress[]);
    });
  });
  if (addresses.length === 0) throw new BlockedTargetError('does not resolve', 'host');
}

/**
 * A `lookup` for sockets (undici's `connect.lookup`) that fails with `BlockedTargetError` when a
 * name resolves to any address the policy refuses: checked on every connection, so a name that
 * passed at creation and now points inside (DNS rebinding) is still refused.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      const refused = addresses.find((entry) => !isAllowedAddress(entry.address, policy));
      if (refused || addresses.length === 0) {
        const reason = refused
          ? `${hostname} resolves to a non-public address (${refused.address})`
          : `${hostname} does not resolve`;
        callback(new BlockedTargetError(reason, 'address'), '', 0);
        return;
      }
      if (options.all === true) {
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        return;
      }
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}
