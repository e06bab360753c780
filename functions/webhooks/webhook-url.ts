// Which URLs a webhook may be sent to. A subscriber's URL is attacker-controlled (SSRF), so
// deployed: `https` only, and every address its host resolves to must be public, checked when the
// subscription is created and again at every delivery, which then connects only to the address it
// checked (no second DNS answer can swap in a private one: DNS rebinding). The local run also
// accepts `http://127.0.0.1:<port>/...` and `http://localhost:<port>/...` (WEBHOOK_ALLOW_LOOPBACK,
// set only by the local run: lib/local/local-environment.ts).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses that are not public: unspecified, loopback, RFC 1918 private, CGNAT (RFC 6598),
 * link-local (with the instance metadata service 169.254.169.254), IETF protocol assignments,
 * documentation and benchmarking ranges, multicast and reserved; IPv6 unspecified, loopback,
 * unique-local fc00::/7 (with the metadata service's fd00:ec2::254), link-local, multicast,
 * documentation, discard-only and NAT64 (which reaches IPv4 addresses behind it). IPv4-mapped
 * IPv6 forms (::ffff:a.b.c.d) are checked as the IPv4 address they carry (toIpv4); ::ffff:0:0/96
 * is not listed, since BlockList checks every IPv4 address against it too.
 * https://www.iana.org/assignments/iana-ipv4-special-registry/ and iana-ipv6-special-registry/
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

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
  if (mapped !== undefined) return isIP(mapped) === 4 && !NOT_PUBLIC.check(mapped, 'ipv4');
  const family = isIP(bare);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(bare, family === 4 ? 'ipv4' : 'ipv6');
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
