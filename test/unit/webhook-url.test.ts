// The address rules of webhook URLs (functions/webhooks/webhook-url.ts), one test per refused
// range: the IANA special-purpose entries that are not globally reachable
// (https://www.iana.org/assignments/iana-ipv4-special-registry/,
// https://www.iana.org/assignments/iana-ipv6-special-registry/) and the IPv6 forms that carry an
// IPv4 address. Each range's first and last address are refused and the addresses just outside
// it are not (a public neighbour shows the prefix length is the registry's, not wider).
import { isPublicAddress, parseWebhookUrl } from '../../functions/webhooks/webhook-url.ts';

/** [range, name, its first and last address, a public address just outside it (if any)] */
const IPV4_RANGES: [string, string, string, string, string | undefined][] = [
  ['0.0.0.0/8', '"this network"', '0.0.0.0', '0.255.255.255', '1.0.0.1'],
  ['10.0.0.0/8', 'private use', '10.0.0.0', '10.255.255.255', '11.0.0.1'],
  ['100.64.0.0/10', 'shared address space (CGNAT)', '100.64.0.0', '100.127.255.255', '100.128.0.1'],
  ['127.0.0.0/8', 'loopback', '127.0.0.0', '127.255.255.255', '128.0.0.1'],
  ['169.254.0.0/16', 'link local (instance metadata)', '169.254.0.0', '169.254.255.255', '169.255.0.1'],
  ['172.16.0.0/12', 'private use', '172.16.0.0', '172.31.255.255', '172.32.0.1'],
  ['192.0.0.0/24', 'IETF protocol assignments', '192.0.0.0', '192.0.0.255', '192.0.1.1'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)', '192.0.2.0', '192.0.2.255', '192.0.3.1'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast', '192.88.99.0', '192.88.99.255', '192.88.100.1'],
  ['192.168.0.0/16', 'private use', '192.168.0.0', '192.168.255.255', '192.169.0.1'],
  ['198.18.0.0/15', 'benchmarking', '198.18.0.0', '198.19.255.255', '198.20.0.1'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)', '198.51.100.0', '198.51.100.255', '198.51.101.1'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)', '203.0.113.0', '203.0.113.255', '203.0.114.1'],
  ['224.0.0.0/4', 'multicast', '224.0.0.0', '239.255.255.255', '223.255.255.254'],
  ['240.0.0.0/4', 'reserved, with limited broadcast', '240.0.0.0', '255.255.255.255', undefined],
];

const IPV6_RANGES: [string, string, string, string, string | undefined][] = [
  ['::/96', 'IPv4-compatible (with :: and ::1)', '::', '::ffff:ffff', '::1:0:0:1'],
  ['::ffff:0:0:0/96', 'IPv4-translated', '::ffff:0:0:0', '::ffff:0:ffff:ffff', '::1:0:0:0:1'],
  ['64:ff9b::/96', 'NAT64 well-known prefix', '64:ff9b::', '64:ff9b::ffff:ffff', '64:ff9b::1:0:0:1'],
  ['64:ff9b:1::/48', 'NAT64 local use', '64:ff9b:1::', '64:ff9b:1:0:ffff:ffff:ffff:ffff', '64:ff9b:2::1'],
  ['100::/64', 'discard only', '100::', '100::ffff:ffff:ffff:ffff', '100:0:0:2::1'],
  ['100:0:0:1::/64', 'dummy prefix', '100:0:0:1::', '100::1:ffff:ffff:ffff:ffff', '100:0:0:2::1'],
  ['2001::/32', 'Teredo', '2001::', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::1'],
  ['2001:2::/48', 'benchmarking', '2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff', '2001:200::1'],
  ['2001:20::/28', 'ORCHIDv2', '2001:20::', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::1'],
  ['2001::/23', 'IETF protocol assignments', '2001::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::1'],
  ['2001:db8::/32', 'documentation', '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::1'],
  ['2002::/16', '6to4', '2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2003::1'],
  ['3fff::/20', 'documentation', '3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff:1000::1'],
  ['5f00::/16', 'SRv6 SIDs', '5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '5f01::1'],
  ['fc00::/7', 'unique local', 'fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fbff:ffff:ffff:ffff:ffff:ffff:ffff:fffe'],
  ['fe80::/10', 'link-local unicast', 'fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', undefined],
  ['fec0::/10', 'site-local (deprecated)', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', undefined],
  ['ff00::/8', 'multicast', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', undefined],
];

describe('refused IPv4 ranges (iana-ipv4-special-registry, not globally reachable; multicast)', () => {
  test.each(IPV4_RANGES)('%s (%s)', (_, _name, first, last, outside) => {
    expect(isPublicAddress(first)).toBe(false);
    expect(isPublicAddress(last)).toBe(false);
    // The same address written as an IPv4-mapped IPv6 address is judged as the IPv4 address.
    expect(isPublicAddress(`::ffff:${first}`)).toBe(false);
    expect(() => parseWebhookUrl(`https://${last}/hook`, false)).toThrow(/not a public address/);
    if (outside !== undefined) expect(isPublicAddress(outside)).toBe(true);
  });
});

describe('refused IPv6 ranges (iana-ipv6-special-registry, not globally reachable; forms carrying an IPv4 address; site-local; multicast)', () => {
  test.each(IPV6_RANGES)('%s (%s)', (_, _name, first, last, outside) => {
    expect(isPublicAddress(first)).toBe(false);
    expect(isPublicAddress(last)).toBe(false);
    expect(() => parseWebhookUrl(`https://[${last}]/hook`, false)).toThrow(/not a public address/);
    if (outside !== undefined) expect(isPublicAddress(outside)).toBe(true);
  });
});

describe('IPv6 forms that carry a loopback or private IPv4 address are refused, as written in a URL', () => {
  test.each([
    ['IPv4-compatible', '::7f00:1'],
    ['IPv4-compatible, dotted', '::127.0.0.1'],
    ['IPv4-mapped', '::ffff:127.0.0.1'],
    ['IPv4-translated', '::ffff:0:7f00:1'],
    ['6to4 of 127.0.0.1', '2002:7f00:1::1'],
    ['6to4 of a public address (refused outright: 6to4 reaches it through whichever relay)', '2002:808:808::1'],
    ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['NAT64 of 169.254.169.254', '64:ff9b::a9fe:a9fe'],
    ['NAT64 local use', '64:ff9b:1::a00:1'],
  ])('%s: %s', (_, address) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(() => parseWebhookUrl(`https://[${address}]/hook`, false)).toThrow(/not a public address/);
  });
});

test('public unicast addresses of both families pass, an IPv4-mapped public address too', () => {
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8']) {
    expect(isPublicAddress(address)).toBe(true);
  }
  expect(parseWebhookUrl('https://[2606:4700:4700::1111]/hook', false).hostname).toBe('[2606:4700:4700::1111]');
});
