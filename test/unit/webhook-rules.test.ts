// The URL rules of webhook subscriptions (SSRF) on a deployed configuration, the published retry
// schedule counted in attempts, the waits SQS accepts, and the schemas of the pipeline's hops.
import * as v from 'valibot';
import { CHANGE_ITEM, CHANGE_SOURCE } from '../../functions/changes/change-event.ts';
import { isPublicAddress, parseWebhookUrl, resolveWebhookAddress, WebhookUrlRefused } from '../../functions/webhooks/webhook-url.ts';
import { ChangeStreamRecord, DeliveryMessageText } from '../../functions/webhooks/pipeline-messages.ts';
import {
  hopSeconds,
  MAX_DELIVERY_ATTEMPTS,
  nextStep,
  RETRY_DELAYS_SECONDS,
  retryDelaySeconds,
  VISIBILITY_CEILING_SECONDS,
} from '../../functions/webhooks/retry-schedule.ts';
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
  test('12 attempts over 77.6 hours: the first retry within 5 s, no delay longer than SQS allows (12 h)', () => {
    const span = RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay, 0);
    expect(MAX_DELIVERY_ATTEMPTS).toBe(12);
    expect((span / 3600).toFixed(1)).toBe('77.6');
    expect(retryDelaySeconds(1)).toBe(5);
    for (let attempt = 1; attempt < MAX_DELIVERY_ATTEMPTS; attempt++) expect(retryDelaySeconds(attempt)).toBeLessThanOrEqual(43_200);
  });

  test('a local scale shortens the delays but never below 1 s', () => {
    expect(retryDelaySeconds(2, 0.001)).toBe(1);
    expect(retryDelaySeconds(4, 0.001)).toBe(8);
  });

  test('a receive attempts when the next attempt is due, waits (no attempt) before, and dead-letters once all 12 were made', () => {
    const now = 1_000_000_000;
    expect(nextStep({ attempts: 0, nextAttemptAt: 0 }, now)).toEqual({ kind: 'attempt', attempt: 1 });
    expect(nextStep({ attempts: 3, nextAttemptAt: now - 10 }, now)).toEqual({ kind: 'attempt', attempt: 4 });
    expect(nextStep({ attempts: 7, nextAttemptAt: now + 43_200_000 }, now)).toEqual({ kind: 'wait', seconds: 43_200 });
    expect(nextStep({ attempts: 11, nextAttemptAt: now + 1200 }, now)).toEqual({ kind: 'wait', seconds: 2 });
    expect(nextStep({ attempts: 12, nextAttemptAt: now + 43_200_000 }, now)).toEqual({ kind: 'exhausted' });
  });

  test('every visibility set is one SQS accepts: within the 12 hours left since the receive, a longer wait in several receives', () => {
    const margin = 360;
    // A 12 h wait set 2 s after the receive: SQS refuses 43,200 ("greater than the maximum time left").
    const first = hopSeconds(43_200, 2_000, margin);
    expect(first).toBeLessThanOrEqual(VISIBILITY_CEILING_SECONDS - 2 - margin);
    // The next receive waits the rest.
    expect(hopSeconds(43_200 - first, 1_000, margin)).toBe(43_200 - first);
    expect(hopSeconds(5, 1_000, margin)).toBe(5);
    expect(hopSeconds(0, 1_000, margin)).toBe(0);
    // Compressed, the ceiling shrinks with the delays (so compressed runs hop too), never grows.
    expect(hopSeconds(22, 0, margin, 0.0005)).toBe(21);
    for (const scale of [1, 0.5, 0.001, 0.000_01])
      expect(hopSeconds(86_400, 0, margin, scale)).toBeLessThanOrEqual(VISIBILITY_CEILING_SECONDS - margin);
  });
});

describe("the pipeline's hops decode their input", () => {
  const changeId = 'chg_1';
  const eventId = '3f1c1d2e-0000-4000-8000-000000000001';
  const cloudEvent = JSON.stringify({
    specversion: '1.0',
    id: changeId,
    source: CHANGE_SOURCE,
    type: 'museum.special-event.created',
    subject: eventId,
    time: '2026-01-01T00:00:00Z',
    datacontenttype: 'application/json',
    data: { eventId, version: 1, event: {}, previous: null },
  });
  const streamRecord = (image: Record<string, unknown>) => ({ eventName: 'INSERT', dynamodb: { SequenceNumber: '100', NewImage: image } });
  const image = {
    [CHANGE_ITEM.cloudEventAttribute]: { S: cloudEvent },
    [CHANGE_ITEM.typeAttribute]: { S: 'museum.special-event.created' },
    [CHANGE_ITEM.eventIdAttribute]: { S: eventId },
  };

  test('a change item INSERT becomes the change to queue', () => {
    expect(v.parse(ChangeStreamRecord, streamRecord(image))).toEqual({
      sequenceNumber: '100',
      changeId,
      type: 'museum.special-event.created',
      eventId,
      cloudEvent,
    });
  });

  test.each([
    [
      'a CloudEvent that is not JSON',
      { ...image, [CHANGE_ITEM.cloudEventAttribute]: { S: 'not a CloudEvent' } },
      /not a change's CloudEvent/,
    ],
    ['an unknown type', { ...image, [CHANGE_ITEM.typeAttribute]: { S: 'museum.special-event.moved' } }, /changeType/],
    [
      'a type the CloudEvent does not have',
      { ...image, [CHANGE_ITEM.typeAttribute]: { S: 'museum.special-event.deleted' } },
      /not the item's/,
    ],
    ['no eventId', { [CHANGE_ITEM.cloudEventAttribute]: image.cloudEvent, [CHANGE_ITEM.typeAttribute]: image.changeType }, /eventId/],
  ])('a stream record with %s is refused with the reason', (_name, badImage, reason) => {
    const decoded = v.safeParse(ChangeStreamRecord, streamRecord(badImage));
    expect(decoded.success).toBe(false);
    if (!decoded.success) expect(v.summarize(decoded.issues)).toMatch(reason);
  });

  test('a queue message body decodes when its CloudEvent is the change it names, and is refused when it is not', () => {
    const body = { subscriptionId: 'wh_x', changeId, eventId, cloudEvent };
    expect(v.parse(DeliveryMessageText, JSON.stringify(body))).toEqual(body);
    for (const bad of [
      '{',
      JSON.stringify({ ...body, changeId: 'chg_2' }),
      JSON.stringify({ ...body, cloudEvent: '{}' }),
      JSON.stringify({ changeId }),
    ])
      expect(v.safeParse(DeliveryMessageText, bad).success).toBe(false);
  });
});

test('after a rotation both secrets sign until the old one retires', () => {
  const now = 1_000_000;
  const secrets = [{ ciphertext: 'new' }, { ciphertext: 'old', retiresAt: now + 10 }];
  expect(signingSecrets(secrets, now).map((secret) => secret.ciphertext)).toEqual(['new', 'old']);
  expect(signingSecrets(secrets, now + 10).map((secret) => secret.ciphertext)).toEqual(['new']);
});
