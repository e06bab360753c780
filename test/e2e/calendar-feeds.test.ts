// Calendar feeds end to end, over real HTTP against the suite's local API and DynamoDB Local: a
// viewer makes a secret address, a calendar app (no credentials) polls it, and every answer is
// parsed with a real iCalendar parser (npm `ical.js`) while an event goes through its creation, a
// removed date (PATCH), a rename and its deletion. Also: revocation, the per-owner cap, the
// per-feed request counter, and that no token reaches the local API's log.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import ICAL from 'ical.js';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { CALENDAR_FEEDS } from '../../functions/calendar/feed-rules.ts';
import { CalendarFeedsStore } from '../../functions/calendar/feed-store.ts';
import type { CreatedFeed, FeedView } from '../../functions/calendar/feed-schema.ts';
import { addDays } from '../../functions/events/calendar-dates.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { api, apiRetrying, createEvent, readUntilSettled, withIdempotencyKey, type Credentials } from '../support/api-client.ts';
import { testCredentialHash, testEnvironment } from '../support/test-environment.ts';

interface FeedEvent {
  uid: string;
  date: string;
  sequence: number;
  status: string;
  summary: string;
  location: string;
  description: string;
  url: string;
}

/** GET of a feed's address as a calendar app sends it: no credentials, the address as given. */
async function poll(url: string, headers: Record<string, string> = {}) {
  const { pathname, search } = new URL(url);
  return api('GET', `${pathname.replace(/^\/v1\.1/, '')}${search}`, { as: 'none', headers });
}

function parse(text: string): FeedEvent[] {
  const calendar = new ICAL.Component(ICAL.parse(text) as unknown[]);
  expect(calendar.name).toBe('vcalendar');
  expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    expect(event.startDate.isDate).toBe(true);
    expect(event.endDate.toString()).toBe(addDays(event.startDate.toString(), 1));
    expect(component.getFirstPropertyValue('dtstamp')).toBeTruthy();
    return {
      uid: event.uid,
      date: event.startDate.toString(),
      sequence: event.sequence,
      status: String(component.getFirstPropertyValue('status')),
      summary: event.summary,
      location: event.location,
      description: event.description,
      url: String(component.getFirstPropertyValue('url')),
    };
  });
}

const today = new Date().toISOString().slice(0, 10); // the local run's museum time zone is UTC
const dates = [addDays(today, 2), addDays(today, 3)];

describe('calendar feeds', () => {
  let feed: CreatedFeed;
  const seen: string[] = [];

  beforeAll(async () => {
    const created = await api<CreatedFeed>('POST', '/calendar-feeds', { as: 'viewer', json: { label: 'Phone' } });
    expect(created.status).toBe(201);
    feed = created.body;
    seen.push(feed.url);
  });

  test('a viewer creates one: 201 with its address (a 256-bit token) and Location; the list never shows the token again', async () => {
    const token = new URL(feed.url).searchParams.get('token') ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new URL(feed.url).pathname).toBe('/v1.1/calendar.ics');
    expect(feed).toMatchObject({ label: 'Phone', id: expect.stringMatching(/^cf_/) as unknown });
    const list = await api<{ feeds: FeedView[] }>('GET', '/calendar-feeds', { as: 'viewer' });
    expect(list.status).toBe(200);
    expect(list.body.feeds).toContainEqual({ id: feed.id, label: 'Phone', createdAt: feed.createdAt });
    expect(list.text).not.toContain(token);
    // Another user does not see it, and cannot revoke it.
    const editors = await api<{ feeds: FeedView[] }>('GET', '/calendar-feeds', { as: 'editor' });
    expect(editors.body.feeds.map((entry) => entry.id)).not.toContain(feed.id);
    expect((await api('DELETE', `/calendar-feeds/${feed.id}`, { as: 'editor' })).status).toBe(404);
  });

  test('follows an event through create, a removed date, a rename and a delete: stable UIDs, rising SEQUENCE, STATUS:CANCELLED, 304 while unchanged', async () => {
    const event = await createEvent({ name: 'Calendar: lantern walk', dates });
    const mine = (text: string) => parse(text).filter((entry) => entry.url.endsWith(`/special-events/${event.eventId}`));
    // Each phase polls a feed of its own, so that polling until the list's index has caught up
    // never meets the per-feed request limit.
    const settled = async (wanted: (entries: FeedEvent[]) => boolean) => {
      const phase = await api<CreatedFeed>('POST', '/calendar-feeds', { as: 'viewer', json: { label: 'Test phase' } });
      expect(phase.status).toBe(201);
      seen.push(phase.body.url);
      const answer = await readUntilSettled(
        () => poll(phase.body.url),
        (response) => response.status === 200 && wanted(mine(response.text)),
      );
      expect((await api('DELETE', `/calendar-feeds/${phase.body.id}`, { as: 'viewer' })).status).toBe(204);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('private, no-cache');
      return { entries: mine(answer.text), etag: answer.headers.get('etag') ?? '' };
    };

    const created = await settled((entries) => entries.length === 2);
    expect(created.entries.map((entry) => [entry.date, entry.status, entry.sequence])).toEqual([
      [dates[0], 'CONFIRMED', 1],
      [dates[1], 'CONFIRMED', 1],
    ]);
    expect(created.entries[0]).toMatchObject({
      summary: 'Calendar: lantern walk',
      location: event.location,
      description: event.eventDescription,
    });
    const uids = created.entries.map((entry) => entry.uid);
    expect(new Set(uids).size).toBe(2);

    // Polling an unchanged calendar: 304 without content (another suite's write in the window may change it between two polls).
    const notModified = await readUntilSettled(
      async () => {
        const fresh = await poll(feed.url);
        return poll(feed.url, { 'If-None-Match': fresh.headers.get('etag') ?? '' });
      },
      (response) => response.status === 304,
    );
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');

    const patch = (json: unknown) =>
      apiRetrying('PATCH', `/special-events/${event.eventId}`, { json, headers: withIdempotencyKey() }).then((r) =>
        expect(r.status).toBe(200),
      );
    await patch({ dates: [dates[0]] });
    const removed = await settled((entries) => entries.some((entry) => entry.status === 'CANCELLED'));
    expect(removed.entries.map((entry) => [entry.uid, entry.status, entry.sequence])).toEqual([
      [uids[0], 'CONFIRMED', 2],
      [uids[1], 'CANCELLED', 2],
    ]);
    // The ETag of the calendar before the change names no current state.
    expect((await poll(feed.url, { 'If-None-Match': created.etag })).status).toBe(200);

    await patch({ name: 'Calendar: lantern walk (moved indoors)' });
    const renamed = await settled((entries) => entries.every((entry) => entry.sequence === 3));
    expect(renamed.entries.map((entry) => [entry.uid, entry.summary, entry.status])).toEqual([
      [uids[0], 'Calendar: lantern walk (moved indoors)', 'CONFIRMED'],
      [uids[1], 'Calendar: lantern walk (moved indoors)', 'CANCELLED'],
    ]);

    expect((await apiRetrying('DELETE', `/special-events/${event.eventId}`, { headers: withIdempotencyKey() })).status).toBe(204);
    const deleted = await settled((entries) => entries.every((entry) => entry.status === 'CANCELLED'));
    expect(deleted.entries.map((entry) => [entry.uid, entry.status, entry.sequence])).toEqual([
      [uids[0], 'CANCELLED', 4],
      [uids[1], 'CANCELLED', 4],
    ]);
  });

  test('an unknown, malformed or missing token is refused without credentials being asked for', async () => {
    const wrong = `${new URL(feed.url).origin}/v1.1/calendar.ics?token=${randomBytes(32).toString('base64url')}`;
    const unknown = await poll(wrong);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('www-authenticate')).toBeNull();
    expect((await poll(`${new URL(feed.url).origin}/v1.1/calendar.ics?token=short`)).status).toBe(404);
    expect((await api('GET', '/calendar.ics', { as: 'none' })).status).toBe(400);
  });

  test('a revoked feed answers 404 at once and leaves the list', async () => {
    const other = await api<CreatedFeed>('POST', '/calendar-feeds', { as: 'viewer', json: {} });
    expect(other.status).toBe(201);
    seen.push(other.body.url);
    expect((await poll(other.body.url)).status).toBe(200);
    expect((await api('DELETE', `/calendar-feeds/${other.body.id}`, { as: 'viewer' })).status).toBe(204);
    expect((await poll(other.body.url)).status).toBe(404);
    expect((await api('DELETE', `/calendar-feeds/${other.body.id}`, { as: 'viewer' })).status).toBe(404);
    const list = await api<{ feeds: FeedView[] }>('GET', '/calendar-feeds', { as: 'viewer' });
    expect(list.body.feeds.map((entry) => entry.id)).not.toContain(other.body.id);
  });

  test(`an owner may hold ${CALENDAR_FEEDS.perOwner} feeds: the next is a 409 problem until one is revoked`, async () => {
    const user = { username: `calendar-${randomBytes(4).toString('hex')}`, password: 'calendar-user-password-1' };
    const users = new UsersStore(createDocumentClient(localClient(testEnvironment().dynamodbEndpoint)), testEnvironment().tableName);
    await users.putUser({ ...user, role: 'viewer', passwordHash: await testCredentialHash(user.password) }, 'create');
    const as: Credentials = user;
    const created = await Promise.all(
      Array.from({ length: CALENDAR_FEEDS.perOwner + 2 }, () => api<CreatedFeed>('POST', '/calendar-feeds', { as, json: {} })),
    );
    expect(created.filter((answer) => answer.status === 201)).toHaveLength(CALENDAR_FEEDS.perOwner);
    const refused = created.filter((answer) => answer.status === 409);
    expect(refused).toHaveLength(2);
    expect(refused[0]?.body).toMatchObject({ type: 'https://museum.example/problems/calendar-feed-limit', status: 409 });
    const first = created.find((answer) => answer.status === 201)?.body as CreatedFeed;
    seen.push(...created.filter((answer) => answer.status === 201).map((answer) => answer.body.url));
    expect((await api('DELETE', `/calendar-feeds/${first.id}`, { as })).status).toBe(204);
    const again = await api<CreatedFeed>('POST', '/calendar-feeds', { as, json: { label: 'Again' } });
    expect(again.status).toBe(201);
    seen.push(again.body.url);
  });

  test(`each feed is counted: the request after ${CALENDAR_FEEDS.requestsPerWindow} in a window is a 429 naming the window's end`, async () => {
    // The store's counter on DynamoDB Local (60 HTTP polls would each read the whole change feed).
    const store = new CalendarFeedsStore(
      createDocumentClient(localClient(testEnvironment().dynamodbEndpoint)),
      testEnvironment().tableName,
    );
    const counted = {
      id: 'cf_counter',
      owner: 'nobody',
      createdAt: new Date().toISOString(),
      tokenHash: `k1$${randomBytes(32).toString('base64url')}`,
    };
    const windowStart = Math.floor(Date.now() / 1000 / CALENDAR_FEEDS.windowSeconds) * CALENDAR_FEEDS.windowSeconds * 1000;
    const at = windowStart + 10_000;
    for (let i = 0; i < CALENDAR_FEEDS.requestsPerWindow; i++) await store.countRequest(counted, at);
    await expect(store.countRequest(counted, at)).rejects.toMatchObject({
      problem: { status: 429 },
      headers: { 'Retry-After': String(CALENDAR_FEEDS.windowSeconds - 10) },
    });
    // The next window starts afresh.
    await expect(store.countRequest(counted, windowStart + CALENDAR_FEEDS.windowSeconds * 1000)).resolves.toBeUndefined();
  });

  afterAll(() => {
    // The local API's log (access log lines and every function's log) holds no token.
    const log = readFileSync(testEnvironment().logFile, 'utf8');
    expect(log).toContain('/v1.1/calendar.ics');
    for (const url of seen) expect(log).not.toContain(new URL(url).searchParams.get('token'));
  });
});
