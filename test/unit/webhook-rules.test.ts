// The URL rules of webhook subscriptions (SSRF) on a deployed configuration, and the published
// retry schedule.
import { isPublicAddress, parseWebhookUrl, resolveWebhookAddress, WebhookUrlRefused } from '../../functions/webhooks/webhook-url.ts';
import { MAX_DELIVERY_ATTEMPTS, RETRY_SPAN_SECONDS, retryDelaySeconds } from '../../functions/webhooks/retry-schedule.ts';
import { signingSecrets } from '../../functions/webhooks/subscription-rules.ts';

describe('webhook URL rules, deployed (no loopback allowance)', () => {
  test.each([
    ['127.0.0.1'],
    ['10.1.2.3'],
    ['172.16.0.1'],
    ['192.168.1.1'],
    ['100.64.0.1'],
    ['169.254.169.254'],
    ['0.0.0.0'],
    ['224.0.0.1'],
    ['::1'],
    ['::'],
    ['fd00:ec2::254'],
    ['fc00::1'],
    ['fe80::1'],
    ['ff02::1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:a9fe:a9fe'],
    ['::ffff:10.0.0.1'],
  ])('%s is not a public address', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  test.each([['93.184.215.14'], ['8.8.8.8'], ['2606:4700:4700::1111'], ['::ffff:8.8.8.8']])('%s is a public address', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  test.each([
    ['http://partner.example/hook', /must be https/],
    ['http://127.0.0.1:8080/hook', /must be https/],
    ['https://10.0.0.7/hook', /not a public address/],
    ['https://[::ffff:169.254.169.254]/hook', /not a public address/],
    ['https://[fd00:ec2::254]/hook', /not a public address/],
    ['https://localhost/hook', /not a public host name/],
    ['https://user:pw@partner.example/hook', /credentials/],
    ['not a url', /absolute URL/],
  ])('%s is refused', (url, reason) => {
    expect(() => parseWebhookUrl(url, false)).toThrow(reason);
  });

  test('a host name resolving to a private address is refused at resolution (checked again at each delivery)', async () => {
    // localhost.localdomain-like names are refused by form; a literal in a name-shaped host is not possible, so resolve a name
    // that the system resolver maps to loopback: "localhost." with a trailing dot passes the form check.
    const url = new URL('https://localhost./hook');
    await expect(resolveWebhookAddress(url, false)).rejects.toBeInstanceOf(WebhookUrlRefused);
  });

  test('the local run also accepts http://127.0.0.1:<port>/ and http://localhost:<port>/, and nothing else over http', () => {
    expect(parseWebhookUrl('http://127.0.0.1:8080/hook', true).port).toBe('8080');
    expect(parseWebhookUrl('http://localhost:8080/hook', true).hostname).toBe('localhost');
    expect(() => parseWebhookUrl('http://127.0.0.1/hook', true)).toThrow(WebhookUrlRefused);
    expect(() => parseWebhookUrl('http://10.0.0.1:8080/hook', true)).toThrow(WebhookUrlRefused);
  });
});

describe('retry schedule', () => {
  test('retries span more than 72 hours, the first within 5 s, none longer than SQS allows (12 h)', () => {
    expect(RETRY_SPAN_SECONDS).toBeGreaterThan(72 * 3600);
    expect(retryDelaySeconds(1)).toBe(5);
    for (let attempt = 1; attempt < MAX_DELIVERY_ATTEMPTS; attempt++) expect(retryDelaySeconds(attempt)).toBeLessThanOrEqual(43_200);
  });

  test('a local scale shortens the delays but never below 1 s', () => {
    expect(retryDelaySeconds(2, 0.001)).toBe(1);
    expect(retryDelaySeconds(4, 0.001)).toBe(8);
  });
});

test('after a rotation both secrets sign until the old one retires', () => {
  const now = 1_000_000;
  const secrets = [{ ciphertext: 'new' }, { ciphertext: 'old', retiresAt: now + 10 }];
  expect(signingSecrets(secrets, now).map((secret) => secret.ciphertext)).toEqual(['new', 'old']);
  expect(signingSecrets(secrets, now + 10).map((secret) => secret.ciphertext)).toEqual(['new']);
});
