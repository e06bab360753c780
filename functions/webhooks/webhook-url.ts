// Which URLs a webhook may be sent to. A subscriber's URL is attacker-controlled (SSRF), so
// deployed: `https` only, and every address its host resolves to must be public, checked when the
// subscription is created and again at every delivery, which then connects only to the address it
// checked (no second DNS answer can swap in a private one: DNS rebinding). The local run also
// accepts `http://127.0.0.1:<port>/...` and `http://localhost:<port>/...` (WEBHOOK_ALLOW_LOOPBACK,
// set only by the local run: lib/local/local-environment.ts).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * The addresses a webhook is never sent to. From the IANA special-purpose registries, every entry
 * whose "Globally Reachable" is False: iana-ipv4-special-registry as last updated 2020-09-04 and
 * iana-ipv6-special-registry as last updated 2025-10-09
 * (https://www.iana.org/assignments/iana-ipv4-special-registry/,
 * https://www.iana.org/assignments/iana-ipv6-special-registry/). Where such an entry holds more
 * specific ones marked globally reachable (inside 192.0.0.0/24 and 2001::/23: the PCP, TURN and
 * DNS-SD anycast addresses, AMT, AS112, ORCHIDv2 and drone entity tags), the whole entry is
 * refused: those are protocol services and identifiers (ORCHIDs are not routable, RFC 7343), never
 * a partner's HTTPS receiver. Also refused: multicast (224.0.0.0/4, ff00::/8: not unicast), the
 * deprecated 6to4 relay anycast 192.88.99.0/24 (RFC 7526), deprecated site-local fec0::/10 (RFC
 * 3879), and every IPv6 form that carries an IPv4 address and so reaches whatever that address is
 * behind a tunnel or translator: IPv4-compatible ::/96 (deprecated, RFC 4291 2.5.5.1, holding :: and
 * ::1), IPv4-translated ::ffff:0:0:0/96 (RFC 2765), NAT64 64:ff9b::/96 (RFC 6052; marked globally
 * reachable, but it reaches the embedded IPv4 address) and local-use 64:ff9b:1::/48 (RFC 8215),
 * 6to4 2002::/16 (RFC 3056) and Teredo 2001::/32 (RFC 4380). IPv4-mapped addresses
 * (::ffff:a.b.c.d) are checked as the IPv4 address they carry (toIpv4): a dual-stack socket
 * connects to exactly that address.
 */
const IPV4_REFUSED: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "This network" (and 0.0.0.0/32)
  ['10.0.0.0', 8], // private use
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link local (with the instance metadata service 169.254.169.254)
  ['172.16.0.0', 12], // private use
  ['192.0.0.0', 24], // IETF protocol assignments (DS-Lite, NAT64 discovery, ...)
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private use
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with the limited broadcast 255.255.255.255/32
];
const IPV6_REFUSED: readonly (readonly [string, number])[] = [
  ['::', 96], // IPv4-compatible, with unspecified ::/128 and loopback ::1/128
  ['::ffff:0:0:0', 96], // IPv4-translated
  ['64:ff9b::', 96], // NAT64 well-known prefix
  ['64:ff9b:1::', 48], // NAT64 local use
  ['100::', 64], // discard only
  ['100:0:0:1::', 64], // dummy prefix (RFC 9780)
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHIDv2 2001:20::/28, ...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 SIDs (RFC 9602)
  ['fc00::', 7], // unique local (with the metadata service's fd00:ec2::254)
  ['fe80::', 10], // link-local unicast
  ['fec0::', 10], // site-local, deprecated
  ['ff00::', 8], // multicast
];

// One list per family: a BlockList also matches an IPv4 address against IPv6 rules (as
// ::ffff:a.b.c.d), so ::/96 in a shared list would refuse every IPv4 address.
const REFUSED = { ipv4: new BlockList(), ipv6: new BlockList() } as const;
for (const [network, prefix] of IPV4_REFUSED) REFUSED.ipv4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_REFUSED) REFUSED.ipv6.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv4-mapped IPv6 address carries (::ffff:a.b.c.d or ::ffff:xxxx:xxxx), else undefined. */
export function toIpv4(address: string): string | undefined {
  const dotted = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const high = parseInt(hex[1] ?? '0', 16);
  const low = parseInt(hex[2] ?? '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True if `address` (an IP literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const mapped = toIpv4(bare);
  if (mapped !== undefined) return isIP(mapped) === 4 && !REFUSED.ipv4.check(mapped, 'ipv4');
  const family = isIP(bare);
  if (family === 0) return false;
  return family === 4 ? !REFUSED.ipv4.check(bare, 'ipv4') : !REFUSED.ipv6.check(bare, 'ipv6');
}

/** Whether this configuration accepts loopback `http` URLs (the local run only). */
export function loopbackAllowed(): boolean {
  return process.env.WEBHOOK_ALLOW_LOOPBACK === '1';
}

/** A URL refused by the rules above, with the reason a client reads. */
export class WebhookUrlRefused extends Error {
  override name = 'WebhookUrlRefused';
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && url.port !== '' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
}

/** Parses `text` and applies the scheme and form rules (no DNS); throws WebhookUrlRefused. */
export function parseWebhookUrl(text: string, allowLoopback = loopbackAllowed()): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlRefused('is not an absolute URL');
  }
  if (url.username || url.password) throw new WebhookUrlRefused('must not carry credentials');
  if (url.hash) throw new WebhookUrlRefused('must not have a fragment');
  if (allowLoopback && isLoopbackHttp(url)) return url;
  if (url.protocol !== 'https:') {
    throw new WebhookUrlRefused(
      allowLoopback ? 'must be https, or http://127.0.0.1:<port>/ or http://localhost:<port>/ in the local run' : 'must be https',
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 || toIpv4(host) !== undefined) {
    if (!isPublicAddress(host)) throw new WebhookUrlRefused(`names ${host}, which is not a public address`);
  } else if (!host.includes('.') || host.endsWith('.localhost') || host === 'localhost') {
    throw new WebhookUrlRefused(`names ${host}, which is not a public host name`);
  }
  return url;
}

/** One resolved and checked address to connect to. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves the URL's host and checks every address it resolves to (any private one refuses the
 * URL: a host that mixes them is not one to trust); returns the first, the only one the delivery
 * connects to. Loopback URLs of the local run resolve to loopback.
 */
export async function resolveWebhookAddress(url: URL, allowLoopback = loopbackAllowed()): Promise<CheckedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (allowLoopback && isLoopbackHttp(url)) return { address: '127.0.0.1', family: 4 };
  const literal = isIP(host);
  const answers = literal !== 0 ? [{ address: host, family: literal }] : await lookupAll(host);
  if (answers.length === 0) throw new WebhookUrlRefused(`host ${host} has no address`);
  for (const answer of answers) {
    if (!isPublicAddress(answer.address))
      throw new WebhookUrlRefused(`host ${host} resolves to ${answer.address}, which is not a public address`);
  }
  const first = answers[0] as { address: string; family: number };
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

async function lookupAll(host: string): Promise<{ address: string; family: number }[]> {
  try {
    return await lookup(host, { all: true, order: 'verbatim' });
  } catch (error) {
    throw new WebhookUrlRefused(`host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The URL rules applied to a subscription's URL when it is created: form, then DNS. */
export async function checkSubscriptionUrl(text: string, allowLoopback = loopbackAllowed()): Promise<URL> {
  const url = parseWebhookUrl(text, allowLoopback);
  await resolveWebhookAddress(url, allowLoopback);
  return url;
}
