// The change feed's pure logic: the change item and its CloudEvent, keys, cursor, the window a
// page may read, and the merge of a day's shards. The reads themselves run against DynamoDB
// Local in test/e2e/change-feed.test.ts.
import { CHANGE_ITEM, type ChangeEvent } from '../../functions/changes/change-event.ts';
import {
  CHANGE_FEED,
  changeItem,
  changeKeys,
  commitTime,
  CursorExpiredError,
  daysBetween,
  encodeCursor,
  endOfDay,
  endOfMoment,
  InvalidCursorError,
  mergeShards,
  requestedWindow,
  RETENTION_MS,
  type FeedPosition,
  type FeedWindow,
} from '../../functions/changes/change-feed.ts';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';
import { matchRoute } from '../../functions/route-matching.ts';
import { FUNCTION_SETTINGS } from '../../functions/deployment.ts';

const EVENT: SpecialEvent = {
  eventId: '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90',
  name: 'Night at the Museum',
  location: 'Main Hall',
  eventDescription: 'Torches',
  dates: ['2031-05-01'],
  price: 25,
};
const ID = '3f9d2c1e-7a4b-4c8d-9e2f-1a2b3c4d5e6f';
const TIME = new Date('2026-11-27T05:40:44.123Z');

/** The shard an event's changes go to, as its change item's partition key names it (`CHANGES#<day>#<shard>`). */
function changeShard(eventId: string): number {
  const { pk } = changeItem({ id: ID, eventId, previous: undefined, next: { ...EVENT, eventId }, version: 1, time: TIME });
  return Number(pk.slice(pk.lastIndexOf('#') + 1));
}

/** The window a request's `since` (a position as its cursor, `now`, or absent) reads at `now`, or which refusal it is. */
function feedWindow(since: FeedPosition | 'now' | undefined, now: Date): FeedWindow | 'expired' | 'future' {
  try {
    return requestedWindow(since === undefined || since === 'now' ? since : encodeCursor(since), now);
  } catch (error) {
    if (error instanceof CursorExpiredError) return 'expired';
    if (error instanceof InvalidCursorError && error.message.includes('in the future')) return 'future';
    throw error;
  }
}

/** The position a cursor names, as a request a day after TIME reads it, or undefined if the feed refuses it as none of its cursors. */
function decodeCursor(cursor: string): FeedPosition | undefined {
  try {
    return requestedWindow(cursor, new Date(TIME.getTime() + 86_400_000)).from;
  } catch (error) {
    if (error instanceof InvalidCursorError && error.message === new InvalidCursorError().message) return undefined;
    throw error;
  }
}

describe('the change item', () => {
  test('a creation: CloudEvents 1.0 with the event after it, previous null, version 1, keyed by day, shard, time and id', () => {
    const item = changeItem({ id: ID, eventId: EVENT.eventId, previous: undefined, next: EVENT, version: 1, time: TIME });
    const cloudEvent = JSON.parse(item[CHANGE_ITEM.cloudEventAttribute]) as ChangeEvent;
    expect(cloudEvent).toEqual({
      specversion: '1.0',
      id: ID,
      source: '/v1.1/special-events',
      type: 'museum.special-event.created',
      subject: EVENT.eventId,
      time: '2026-11-27T05:40:44.123Z',
      datacontenttype: 'application/json',
      data: { eventId: EVENT.eventId, version: 1, event: EVENT, previous: null },
    });
    expect(cloudEvent.id).not.toContain('.');
    expect(item.pk).toBe(`CHANGES#2026-11-27#${changeShard(EVENT.eventId)}`);
    expect(item.sk).toBe(`2026-11-27T05:40:44.123Z#${ID}`);
    expect(item[CHANGE_ITEM.typeAttribute]).toBe('museum.special-event.created');
    expect(item[CHANGE_ITEM.eventIdAttribute]).toBe(EVENT.eventId);
    expect(item[CHANGE_ITEM.expiresAtAttribute] * 1000).toBeGreaterThan(TIME.getTime() + RETENTION_MS);
  });

  test('an update carries both states; a deletion has event null and the deleted state as previous', () => {
    const changed = { ...EVENT, price: 30 };
    const update = JSON.parse(
      changeItem({ id: ID, eventId: EVENT.eventId, previous: EVENT, next: changed, version: 2, time: TIME }).cloudEvent,
    ) as ChangeEvent;
    expect(update.type).toBe('museum.special-event.updated');
    expect(update.data).toEqual({ eventId: EVENT.eventId, version: 2, event: changed, previous: EVENT });
    const deletion = JSON.parse(
      changeItem({ id: ID, eventId: EVENT.eventId, previous: changed, next: undefined, version: 3, time: TIME }).cloudEvent,
    ) as ChangeEvent;
    expect(deletion.type).toBe('museum.special-event.deleted');
    expect(deletion.data).toEqual({ eventId: EVENT.eventId, version: 3, event: null, previous: changed });
  });

  test('the same event is the same text whatever order its fields were built in', () => {
    const reordered = { price: 25, dates: ['2031-05-01'], eventDescription: 'Torches', location: 'Main Hall', name: 'Night at the Museum' };
    const a = changeItem({ id: ID, eventId: EVENT.eventId, previous: undefined, next: EVENT, version: 1, time: TIME });
    const b = changeItem({
      id: ID,
      eventId: EVENT.eventId,
      previous: undefined,
      next: { ...reordered, eventId: EVENT.eventId },
      version: 1,
      time: TIME,
    });
    expect(b.cloudEvent).toBe(a.cloudEvent);
  });

  test("a change's time is after the event's previous change, even when this host's clock is behind", () => {
    expect(commitTime(TIME, undefined)).toBe(TIME);
    expect(commitTime(TIME, '2026-11-27T05:40:44.000Z')).toBe(TIME);
    expect(commitTime(TIME, '2026-11-27T05:40:45.000Z').toISOString()).toBe('2026-11-27T05:40:45.001Z');
    expect(commitTime(TIME, TIME.toISOString()).toISOString()).toBe('2026-11-27T05:40:44.124Z');
  });

  test("shards spread events over every partition of a day, one event's changes always in the same one", () => {
    const shards = new Set(Array.from({ length: 400 }, (_, i) => changeShard(`event-${i}`)));
    expect([...shards].sort()).toEqual(Array.from({ length: CHANGE_FEED.shards }, (_, i) => i));
    expect(changeShard(EVENT.eventId)).toBe(changeShard(EVENT.eventId));
  });

  test('sort keys order changes by time, then id, as text', () => {
    const keys = [
      changeKeys.sortKey('2026-11-27T05:40:44.123Z', 'b'),
      changeKeys.sortKey('2026-11-27T05:40:44.123Z', 'a'),
      changeKeys.sortKey('2026-11-27T05:40:45.000Z', 'a'),
      changeKeys.sortKey('2026-11-26T23:59:59.999Z', 'z'),
    ];
    expect([...keys].sort()).toEqual([keys[3], keys[1], keys[0], keys[2]]);
  });
});

describe('the cursor', () => {
  test('round-trips a change position and a moment, and is base64url', () => {
    for (const position of [`2026-11-27T05:40:44.123Z#${ID}`, endOfMoment(TIME)] as FeedPosition[]) {
      const cursor = encodeCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor)).toBe(position);
    }
  });

  test.each([
    ['empty', ''],
    ['not base64url', 'abc$'],
    ['another text', Buffer.from('hello').toString('base64url')],
    ['an impossible time', encodeCursor(`2026-02-30T05:40:44.123Z#${ID}` as FeedPosition)],
    ['a time without milliseconds', Buffer.from(`c1.2026-11-27T05:40:44Z#${ID}`).toString('base64url')],
    ['an id that is no UUID', encodeCursor('2026-11-27T05:40:44.123Z#x')],
    ['padding', `${encodeCursor(endOfMoment(TIME))}=`],
    ['a second spelling of the same bytes', `${encodeCursor(endOfMoment(TIME)).slice(0, -1)}_`],
  ])('refuses %s', (_, cursor) => {
    expect(decodeCursor(cursor)).toBeUndefined();
  });
});

describe('the window a page reads', () => {
  const now = new Date('2026-11-27T12:00:00.000Z');
  const boundary = endOfMoment(new Date(now.getTime() - CHANGE_FEED.holdBackMs));

  test(`the hold-back covers a handler's timeout (a commit lands at most that long after its time) and leaves every change readable within 15 s`, () => {
    expect(CHANGE_FEED.holdBackMs).toBeGreaterThan(FUNCTION_SETTINGS.handler.timeoutSeconds * 1000);
    expect(CHANGE_FEED.holdBackMs).toBeLessThan(15_000);
    expect(CHANGE_FEED.retentionDays).toBeGreaterThanOrEqual(30);
  });

  test('since=now is an empty window at the hold-back boundary; no since starts at the oldest retained change', () => {
    expect(feedWindow('now', now)).toEqual({ from: boundary, until: boundary });
    expect(feedWindow(undefined, now)).toEqual({ from: endOfMoment(new Date(now.getTime() - RETENTION_MS)), until: boundary });
  });

  test('a cursor reads up to the boundary; one past it (another clock) reads nothing and stays where it is', () => {
    const cursor = `2026-11-27T11:00:00.000Z#${ID}` as FeedPosition;
    expect(feedWindow(cursor, now)).toEqual({ from: cursor, until: boundary });
    const ahead = endOfMoment(new Date(now.getTime() - 1_000));
    expect(feedWindow(ahead, now)).toEqual({ from: ahead, until: ahead });
  });

  test('a cursor older than retention has expired; one far in the future was never handed out', () => {
    expect(feedWindow(endOfMoment(new Date(now.getTime() - RETENTION_MS - 1)), now)).toBe('expired');
    expect(feedWindow(endOfMoment(new Date(now.getTime() - RETENTION_MS + 1000)), now)).not.toBe('expired');
    expect(feedWindow(endOfMoment(new Date(now.getTime() + 3_600_000)), now)).toBe('future');
  });

  test('days run from the cursor to the boundary, in order, across month ends', () => {
    expect(daysBetween(endOfMoment(new Date('2026-11-29T10:00:00.000Z')), endOfMoment(new Date('2026-12-02T01:00:00.000Z')))).toEqual([
      '2026-11-29',
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
    ]);
    expect(endOfDay('2026-11-29') > (`2026-11-29T23:59:59.999Z#${ID}` as string)).toBe(true);
    expect(endOfDay('2026-11-29') < (`2026-11-30T00:00:00.000Z#${ID}` as string)).toBe(true);
  });

  test('a page may query every shard of every day of the widest window (no since), at any time of day: a walk over empty days reaches the hold-back in one page', () => {
    for (const time of ['00:00:00.000', '00:00:11.000', '00:00:13.000', '12:00:00.000', '23:59:59.999']) {
      const window = feedWindow(undefined, new Date(`2026-11-27T${time}Z`));
      if (window === 'expired' || window === 'future') throw new Error('no window');
      expect(daysBetween(window.from, window.until).length * CHANGE_FEED.shards).toBeLessThanOrEqual(CHANGE_FEED.maxQueriesPerPage);
    }
  });
});

describe("merging a day's shards", () => {
  const item = (second: number) => ({
    sk: `2026-11-27T05:40:${String(second).padStart(2, '0')}.000Z#${ID}` as FeedPosition,
    cloudEvent: '{}',
  });
  const until = endOfMoment(new Date('2026-11-27T06:00:00.000Z'));

  test('complete shards merge into time order, up to the boundary', () => {
    const merged = mergeShards(
      [
        { items: [item(3), item(7)], truncated: false },
        { items: [item(1), item(9)], truncated: false },
      ],
      until,
    );
    expect(merged.items.map((change) => change.sk)).toEqual([item(1), item(3), item(7), item(9)].map((change) => change.sk));
    expect(merged.completeTo).toBe(until);
  });

  test("a shard that stopped early bounds the merge: nothing after its last change is taken, so no shard's later change is skipped", () => {
    const merged = mergeShards(
      [
        { items: [item(3), item(5)], truncated: true },
        { items: [item(1), item(4), item(6), item(9)], truncated: false },
      ],
      until,
    );
    expect(merged.items.map((change) => change.sk)).toEqual([item(1), item(3), item(4), item(5)].map((change) => change.sk));
    expect(merged.completeTo).toBe(item(5).sk);
  });
});

describe('route matching prefers literal segments, as API Gateway does', () => {
  test('/special-events/changes is the feed, not an event id; other ids still reach the event routes', () => {
    const feed = matchRoute('GET', '/special-events/changes');
    expect(feed.route?.operationId).toBe('listSpecialEventChanges');
    expect(matchRoute('GET', `/special-events/${EVENT.eventId}`)).toEqual({
      route: expect.objectContaining({ operationId: 'getSpecialEvent' }) as unknown,
      pathParameters: { eventId: EVENT.eventId },
    });
    expect(matchRoute('HEAD', '/special-events/changes').route?.operationId).toBe('listSpecialEventChanges');
  });

  test("a method the literal resource lacks is its 405, never the variable resource's method", () => {
    expect(matchRoute('PATCH', '/special-events/changes')).toEqual({ route: undefined, allowedMethods: ['GET'] });
    expect(matchRoute('DELETE', '/special-events/changes')).toEqual({ route: undefined, allowedMethods: ['GET'] });
  });
});
