// Who an anonymous request is, for counting: the socket's address, or with trusted proxies
// configured the address the nearest untrusted hop gave (proxy-addr walks X-Forwarded-For from
// the right and stops at the first address that is not a trusted proxy). A client that sends its
// own X-Forwarded-For therefore never picks its bucket. IPv6 callers are counted per /64: one
// host usually holds a whole /64, and counting its addresses one by one would give it 2^64 buckets.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

export type ClientAddress = (req: IncomingMessage) => string;

/** @param trustedProxies addresses, CIDR ranges or proxy-addr's names (loopback, linklocal, uniquelocal) */
export function clientAddress(trustedProxies: string[]): ClientAddress {
  const trust = trustedProxies.length ? proxyaddr.compile(trustedProxies) : undefined;
  if (trust) {
    return (req) => {
      const raw = proxyaddr(req, trust);
      return raw ? callerAddress(raw) : UNREADABLE_ADDRESS;
    };
  }
  // Without proxies the address is the socket's: worked out once per connection, not per request.
  const bySocket = new WeakMap<Socket, string>();
  return (req) => {
    let address = bySocket.get(req.socket);
    if (address === undefined) {
      const raw = req.socket.remoteAddress;
      address = raw ? callerAddress(raw) : UNREADABLE_ADDRESS;
      bySocket.set(req.socket, address);
    }
    return address;
  };
}

/** Where a forwarded address cannot be read: one shared bucket, never a bucket per string. */
export const UNREADABLE_ADDRESS = 'unreadable';

/**
 * 10.0.0.1 and ::ffff:10.0.0.1 are one caller; an IPv6 caller is its /64. Some proxies forward
 * the client's port too (203.0.113.5:1234, [2001:db8::1]:443): without it, or a port per bucket.
 */
export function callerAddress(raw: string): string {
  const bare = withoutPort(raw);
  if (!ipaddr.isValid(bare)) return UNREADABLE_ADDRESS;
  const address = ipaddr.process(bare);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

function withoutPort(raw: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(raw);
  if (bracketed) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(raw);
  return v4WithPort ? v4WithPort[1] : raw;
}

/** proxy-addr's own check, so a bad TRUST_PROXY entry is reported at start-up. */
export function checkTrustedProxies(entries: string[]): void {
  proxyaddr.compile(entries);
}
