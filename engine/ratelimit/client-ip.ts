// Who an anonymous request is, for counting: the socket's address, or with trusted proxies
// configured the address the nearest untrusted hop gave (proxy-addr walks X-Forwarded-For from
// the right and stops at the first address that is not a trusted proxy). A client that sends its
// own X-Forwarded-For therefore never picks its bucket. IPv6 callers are counted per /64: one
// host usually holds a whole /64, and counting its addresses one by one would give it 2^64 buckets.
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

export type ClientAddress = (req: IncomingMessage) => string;

/** @param trustedProxies addresses, CIDR ranges or proxy-addr's names (loopback, linklocal, uniquelocal) */
export function clientAddress(trustedProxies: string[]): ClientAddress {
  const trust = trustedProxies.length ? proxyaddr.compile(trustedProxies) : undefined;
  return (req) => {
    const raw = trust ? proxyaddr(req, trust) : req.socket.remoteAddress;
    return raw ? callerAddress(raw) : 'unknown';
  };
}

/** 10.0.0.1 and ::ffff:10.0.0.1 are one caller; an IPv6 caller is its /64. */
export function callerAddress(raw: string): string {
  if (!ipaddr.isValid(raw)) return raw;
  const address = ipaddr.process(raw);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/** proxy-addr's own check, so a bad TRUSTED_PROXIES entry is reported at start-up. */
export function checkTrustedProxies(entries: string[]): void {
  proxyaddr.compile(entries);
}
