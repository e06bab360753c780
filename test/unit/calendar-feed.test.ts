// A calendar feed's entries (functions/calendar/feed-entries.ts) and their iCalendar text
// (functions/calendar/ics.ts), read back with a real iCalendar parser (npm `ical.js`): one event
// followed through its creation, a removed date, a rename and its deletion, as the change feed
// records them (functions/changes/change-feed.ts, toChangeEvent).
import ICAL from 'ical.js';
import { feedEntries, type UpcomingEvent } from '../../functions/calendar/feed-entries.ts';
import { candidateTokenHashes, feedTokenHash } from '../../functions/calendar/feed-tokens.ts';
import { FEED_TOKEN_PATTERN, newFeedToken } from '../../functions/calendar/feed-rules.ts';
import { renderCalendar } from '../../functions/calendar/ics.ts';
import { parseCredentialKeys } from '../../functions/auth/credentials.ts';
import { toChangeEvent } from '../../functions/changes/change-feed.ts';
import type { ChangeEvent } from '../../functions/changes/change-event.ts';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';

const range = { today: '2031-05-01', lastDate: '2032-05-01' };
const eventId = '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90';
const v1: SpecialEvent = {
  eventId,
  name: 'Night at the museum',
  location: 'Main hall',
  eventDescription: 'After hours;\nwith torches, and more',
  dates: ['2031-04-30', '2031-05-02', '2031-05-03'],
  price: 25,
};
const v2 = { ...v1, dates: ['2031-04-30', '2031-05-02'] };
const v3 = { ...v2, name: 'Night at the museum (renamed)' };

function change(previous: SpecialEvent | undefined, next: SpecialEvent | undefined, version: number, time: string): ChangeEvent {
  return toChangeEvent({ id: `00000000-0000-4000-8000-00000000000${version}`, eventId, previous, next, version, time: new Date(time) });
}

const changes = [
  change(undefined, v1, 1, '2031-04-20T10:00:00.000Z'),
  change(v1, v2, 2, '2031-04-21T10:00:00.000Z'),
  change(v2, v3, 3, '2031-04-22T10:00:00.000Z'),
  change(v3, undefined, 4, '2031-04-23T10:00:00.000Z'),
];

interface Parsed {
  uid: string;
  sequence: number;
  status: string | null;
  summary: string;
  start: string;
  end: string;
  startIsDate: boolean;
  description: string;
  location: string;
  url: string;
  stamp: string;
}

function parse(text: string): Parsed[] {
  const calendar = new ICAL.Component(ICAL.parse(text) as unknown[]);
  expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
  expect(calendar.getFirstPropertyValue('prodid')).toBeTruthy();
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    return {
      uid: event.uid,
      sequence: event.sequence,
      status: component.getFirstPropertyValue('status') as string | null,
      summary: event.summary,
      start: event.startDate.toString(),
      end: event.endDate.toString(),
      startIsDate: event.startDate.isDate,
      description: event.description,
      location: event.location,
      url: String(component.getFirstPropertyValue('url')),
      stamp: String(component.getFirstPropertyValue('dtstamp')),
    };
  });
}

const render = (upcoming: UpcomingEvent[], known: ChangeEvent[]) =>
  renderCalendar(feedEntries(upcoming, known, range), (id) => `https://api.museum.example/v1.1/special-events/${id}`);

describe('a calendar feed', () => {
  test('lists each upcoming date once as an all-day event; past dates are left out', () => {
    const text = render([{ event: v1, version: 1, updatedAt: '2031-04-20T10:00:00.000Z' }], changes.slice(0, 1));
    const events = parse(text);
    expect(events.map((event) => [event.start, event.end, event.startIsDate, event.status, event.sequence])).toEqual([
      ['2031-05-02', '2031-05-03', true, 'CONFIRMED', 1],
      ['2031-05-03', '2031-05-04', true, 'CONFIRMED', 1],
    ]);
    expect(events[0]).toMatchObject({
      summary: v1.name,
      description: v1.eventDescription,
      location: v1.location,
      url: `https://api.museum.example/v1.1/special-events/${eventId}`,
      stamp: '2031-04-20T10:00:00Z',
    });
    // RFC 5545 §3.1: content lines end with CRLF.
    expect(text.split('\r\n').length).toBeGreaterThan(10);
  });

  test('follows an event through a removed date, a rename and its deletion: stable UIDs, rising SEQUENCE, STATUS:CANCELLED', () => {
    const created = parse(render([{ event: v1, version: 1, updatedAt: changes[0]?.time }], changes.slice(0, 1)));
    const removed = parse(render([{ event: v2, version: 2, updatedAt: changes[1]?.time }], changes.slice(0, 2)));
    const renamed = parse(render([{ event: v3, version: 3, updatedAt: changes[2]?.time }], changes.slice(0, 3)));
    const deleted = parse(render([], changes));
    const uids = created.map((event) => event.uid);
    expect(new Set(uids).size).toBe(2);
    for (const answer of [removed, renamed, deleted]) expect(answer.map((event) => event.uid)).toEqual(uids);

    expect(removed.map((event) => [event.status, event.sequence])).toEqual([
      ['CONFIRMED', 2],
      ['CANCELLED', 2],
    ]);
    expect(renamed.map((event) => [event.summary, event.status, event.sequence])).toEqual([
      [v3.name, 'CONFIRMED', 3],
      [v3.name, 'CANCELLED', 3],
    ]);
    expect(deleted.map((event) => [event.summary, event.status, event.sequence])).toEqual([
      [v3.name, 'CANCELLED', 4],
      [v3.name, 'CANCELLED', 4],
    ]);
    // Each UID's SEQUENCE never falls from one answer to the next.
    for (const [i, uid] of uids.entries()) {
      const sequences = [created, removed, renamed, deleted].map((answer) => answer.find((event) => event.uid === uid)?.sequence ?? 0);
      expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
      expect(sequences[3]).toBeGreaterThan(sequences[0] ?? 0);
      expect(i).toBeLessThan(2);
    }
  });

  test('a date put back after its removal is confirmed again, with the later version', () => {
    const back = { ...v2, dates: v1.dates };
    const known = [...changes.slice(0, 2), change(v2, back, 3, '2031-04-22T10:00:00.000Z')];
    const events = parse(render([{ event: back, version: 3, updatedAt: '2031-04-22T10:00:00.000Z' }], known));
    expect(events.map((event) => [event.start, event.status, event.sequence])).toEqual([
      ['2031-05-02', 'CONFIRMED', 3],
      ['2031-05-03', 'CONFIRMED', 3],
    ]);
  });

  test('a cancelled date that has passed, or lies past the horizon, is left out', () => {
    expect(parse(render([], changes)).length).toBe(2);
    expect(feedEntries([], changes, { today: '2031-05-03', lastDate: '2032-05-03' }).map((entry) => entry.date)).toEqual(['2031-05-03']);
    expect(feedEntries([], changes, { today: '2031-05-04', lastDate: '2032-05-04' })).toEqual([]);
    expect(feedEntries([], changes, { today: '2030-01-01', lastDate: '2031-05-02' }).map((entry) => entry.date)).toEqual([
      '2031-04-30',
      '2031-05-02',
    ]);
  });

  test('the same state renders the same bytes (so the same ETag)', () => {
    const upcoming = [{ event: v2, version: 2, updatedAt: changes[1]?.time }];
    expect(render(upcoming, changes.slice(0, 2))).toBe(render(upcoming, changes.slice(0, 2)));
  });
});

describe('a feed token', () => {
  const keys = parseCredentialKeys(JSON.stringify({ current: 'k2', k1: 'a'.repeat(40), k2: 'b'.repeat(40) }));

  test('has 256 random bits in 43 base64url characters', () => {
    const tokens = new Set(Array.from({ length: 100 }, newFeedToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(FEED_TOKEN_PATTERN);
  });

  test('is stored as a keyed hash naming its key; lookups try the current key first, then the others', () => {
    const token = newFeedToken();
    const stored = feedTokenHash(token, keys);
    expect(stored).toMatch(/^k2\$[A-Za-z0-9_-]{43}$/);
    expect(stored).not.toContain(token);
    const candidates = candidateTokenHashes(token, keys);
    expect(candidates[0]).toBe(stored);
    expect(candidates[1]).toBe(feedTokenHash(token, { ...keys, current: 'k1' }));
    expect(candidateTokenHashes(`${token}x`, keys)).toEqual([]);
    expect(candidateTokenHashes('', keys)).toEqual([]);
  });
});
