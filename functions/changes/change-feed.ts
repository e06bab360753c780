// The change feed's pure logic (no DynamoDB call here, so the unit loop tests it): the change
// item a commit writes, its keys, the cursor, and how a page of the feed is planned and merged.
// Key design, hot partitions and the reasons for the hold-back: functions/store/README.md.
import { createHash } from 'node:crypto';
import { EVENT_FIELDS } from '../events/event-fields.ts';
import type { SpecialEvent } from '../events/event-schema.ts';
import { HttpProblem } from '../events/problems.ts';
import { FUNCTION_SETTINGS } from '../deployment.ts';
import { CHANGE_ITEM, CHANGE_SOURCE, type ChangeEvent, type ChangeType } from './change-event.ts';

const RETENTION_DAYS = 31;
const SHARDS = 8;

/**
 * - retentionDays: changes are served for 31 days after their commit (the promise: at least 30);
 *   the TTL attribute expires them then, lazily, and the reader ignores older ones itself.
 * - shards: the change partitions of one day; a commit writes to the one its eventId hashes to.
 * - holdBackMs: the newest moments a reader leaves out. A commit takes its time after the read
 *   that decides its version and lands at the latest when its invocation ends, a handler's
 *   timeout later; the margin covers the clocks of different hosts. Every change is readable
 *   holdBackMs after its time, within the 15 s the feed promises.
 * - maxQueriesPerPage: a page reads at most this many partitions: every shard of every day the feed
 *   keeps (the retention's days and today), so a walk over empty days goes on to the hold-back in
 *   one page instead of answering empty pages that are not the end. A page stops short of the
 *   hold-back only with changes in it (its limit, its bytes, or a shard's query stopping early),
 *   or when its time runs out, and then says so (`caughtUp: false`).
 * - pageTimeBudgetMs: after this long a page starts no further day, so a slow walk answers
 *   (`caughtUp: false`, possibly without changes) well within the handler's timeout instead of
 *   failing with it; on DynamoDB the 32 rounds of queries take far less.
 * - maxPageBytes: a page stops once its changes hold this much text, far below Lambda's 6 MB.
 */
export const CHANGE_FEED = {
  retentionDays: RETENTION_DAYS,
  shards: SHARDS,
  holdBackMs: FUNCTION_SETTINGS.handler.timeoutSeconds * 1000 + 2_000,
  maxQueriesPerPage: (RETENTION_DAYS + 1) * SHARDS,
  pageTimeBudgetMs: 4_000,
  maxPageBytes: 1024 * 1024,
} as const;

export const RETENTION_MS = CHANGE_FEED.retentionDays * 24 * 3600 * 1000;

/** The change item, as written in the commit's transaction and read by the feed and the stream consumer. */
export interface ChangeItem {
  pk: string;
  sk: string;
  [CHANGE_ITEM.cloudEventAttribute]: string;
  [CHANGE_ITEM.typeAttribute]: ChangeType;
  [CHANGE_ITEM.eventIdAttribute]: string;
  [CHANGE_ITEM.expiresAtAttribute]: number;
}

/** What one commit changed: the event before (none: a creation) and after (none: a deletion), the version after, and when. */
export interface CommittedChange {
  /** The commit's write id: the change's id. */
  id: string;
  eventId: string;
  previous: SpecialEvent | undefined;
  next: SpecialEvent | undefined;
  /** The version after the change; for a deletion, the deleted version + 1. */
  version: number;
  time: Date;
}

/**
 * The commit time of a write of an event last written at `lastWrite` (its base item's
 * `updatedAt`): now, but always after the previous change of the same event, so that one
 * event's changes are in version order in the feed whatever the clocks of the hosts that wrote them.
 */
export function commitTime(now: Date, lastWrite: string | undefined): Date {
  const previous = lastWrite === undefined ? Number.NaN : Date.parse(lastWrite);
  return Number.isNaN(previous) || previous < now.getTime() ? now : new Date(previous + 1);
}

/** The six fields in their fixed order, so that the same event is the same text in every change. */
function sixFields(event: SpecialEvent | undefined): SpecialEvent | null {
  if (!event) return null;
  const fields: Record<string, unknown> = { eventId: event.eventId };
  for (const field of EVENT_FIELDS) fields[field] = event[field];
  return fields as unknown as SpecialEvent;
}

export function toChangeEvent(change: CommittedChange): ChangeEvent {
  const type: ChangeType = !change.previous
    ? 'museum.special-event.created'
    : change.next
      ? 'museum.special-event.updated'
      : 'museum.special-event.deleted';
  return {
    specversion: '1.0',
    id: change.id,
    source: CHANGE_SOURCE,
    type,
    subject: change.eventId,
    time: change.time.toISOString(),
    datacontenttype: 'application/json',
    data: { eventId: change.eventId, version: change.version, event: sixFields(change.next), previous: sixFields(change.previous) },
  };
}

/** The shard of an event's changes: fixed per event (a hash of its id), spread evenly over CHANGE_FEED.shards. */
function changeShard(eventId: string): number {
  return (createHash('sha256').update(eventId).digest()[0] as number) % CHANGE_FEED.shards;
}

export const changeKeys = {
  /** One partition per UTC day and shard: a reader walks the days in order and merges their shards. */
  partition: (day: string, shard: number) => `${CHANGE_ITEM.pkPrefix}${day}#${shard}`,
  /** Sorted by commit time (fixed-width RFC 3339, so text order is time order), then id: the feed's order. */
  sortKey: (time: string, id: string) => `${time}#${id}`,
};

/** The change item of a commit, for its TransactWriteItems. */
export function changeItem(change: CommittedChange): ChangeItem {
  const cloudEvent = toChangeEvent(change);
  return {
    pk: changeKeys.partition(cloudEvent.time.slice(0, 10), changeShard(change.eventId)),
    sk: changeKeys.sortKey(cloudEvent.time, cloudEvent.id),
    [CHANGE_ITEM.cloudEventAttribute]: JSON.stringify(cloudEvent),
    [CHANGE_ITEM.typeAttribute]: cloudEvent.type,
    [CHANGE_ITEM.eventIdAttribute]: change.eventId,
    // Never before the reader stops serving it (TTL deletes late, never early).
    [CHANGE_ITEM.expiresAtAttribute]: Math.ceil((change.time.getTime() + RETENTION_MS) / 1000) + 1,
  };
}

/**
 * A position in the feed: the sort key of the last change handed out (`<time>#<id>`), or the
 * end of a moment (`<time>#~`: after every change at that millisecond; ids are UUIDs, all below
 * `~`). The feed continues with the sort keys above it.
 */
export type FeedPosition = `${string}#${string}`;

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// A change's sort key, or the end of a moment (`~`).
const POSITION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)#([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|~)$/;
const CURSOR_VERSION = 'c1.';

/** After every change at `time` and before. */
export function endOfMoment(time: Date): FeedPosition {
  return `${time.toISOString()}#~`;
}

export function positionTime(position: FeedPosition): string {
  return position.slice(0, position.indexOf('#'));
}

/** The cursor a client holds: opaque (base64url of a version tag and the position), so its form may change. */
export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`${CURSOR_VERSION}${position}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or undefined if it is no cursor this feed hands out. */
function decodeCursor(cursor: string): FeedPosition | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(CURSOR_VERSION)) return undefined;
  const [, time = '', id = ''] = POSITION.exec(text.slice(CURSOR_VERSION.length)) ?? [];
  if (!TIME.test(time) || new Date(time).toISOString() !== time) return undefined;
  const position: FeedPosition = `${time}#${id}`;
  // One spelling per position: a cursor re-encoded differently (padding, other bits in the last character) is not one of ours.
  return encodeCursor(position) === cursor ? position : undefined;
}

/** Where a read may go: changes after `from`, up to and including `until`, none older than `oldest` (exclusive). */
export interface FeedWindow {
  from: FeedPosition;
  until: FeedPosition;
}

/**
 * What a request for the page after `since` (undefined: from the oldest retained change;
 * 'now': no changes, a cursor for what follows) may read at `now`:
 * - `expired`: the cursor is older than retention (changes after it may be gone): a 410;
 * - `future`: the cursor is too far ahead of this clock to be one the feed handed out: a 400;
 * - otherwise the window, empty when the cursor is at or past the hold-back boundary (a cursor
 *   never moves back, even if this host's clock is behind the one that handed it out).
 */
function feedWindow(since: FeedPosition | 'now' | undefined, now: Date): FeedWindow | 'expired' | 'future' {
  const until = endOfMoment(new Date(now.getTime() - CHANGE_FEED.holdBackMs));
  const oldest = endOfMoment(new Date(now.getTime() - RETENTION_MS));
  if (since === 'now') return { from: until, until };
  if (since === undefined) return { from: oldest, until };
  if (since < oldest) return 'expired';
  if (Date.parse(positionTime(since)) > now.getTime() + 60_000) return 'future';
  return { from: since, until: since > until ? since : until };
}

/**
 * The window a request's `since` (a cursor as handed out, `now`, or absent) may read at `now`, or
 * the problem it is: the one reading of `since` for the feed and for a webhook replay.
 */
export function requestedWindow(since: string | undefined, now: Date): FeedWindow {
  const position = since === undefined || since === 'now' ? since : decodeCursor(since);
  if (position === undefined && since !== undefined) throw new InvalidCursorError();
  const window = feedWindow(position, now);
  if (window === 'expired') throw new CursorExpiredError();
  if (window === 'future') throw new InvalidCursorError('is not a cursor this feed handed out: it lies in the future');
  return window;
}

/** The UTC days from the day of `from` to the day of `until`, in order. */
export function daysBetween(from: FeedPosition, until: FeedPosition): string[] {
  const days: string[] = [];
  const last = positionTime(until).slice(0, 10);
  for (let day = new Date(`${positionTime(from).slice(0, 10)}T00:00:00.000Z`); ; day = new Date(day.getTime() + 86_400_000)) {
    const text = day.toISOString().slice(0, 10);
    if (text > last) return days;
    days.push(text);
  }
}

/** The last position of a UTC day: a walk that has read a day to its end continues with the next. */
export function endOfDay(day: string): FeedPosition {
  return `${day}T23:59:59.999Z#~`;
}

/** One shard's answer to a query for the changes after a position: its items in order, and whether more follow. */
export interface ShardRead {
  items: { sk: FeedPosition; cloudEvent: string }[];
  truncated: boolean;
}

/**
 * Merges the shards of one day into feed order, up to where all of them are known: a shard that
 * stopped early (its query's Limit or 1 MB) is known only up to its last item, so nothing after
 * the earliest such stop is taken. Returns the changes in order and the position they are complete to.
 */
export function mergeShards(reads: readonly ShardRead[], until: FeedPosition): { items: ShardRead['items']; completeTo: FeedPosition } {
  let completeTo = until;
  for (const read of reads) {
    const last = read.items.at(-1);
    if (read.truncated && last && last.sk < completeTo) completeTo = last.sk;
  }
  const items = reads
    .flatMap((read) => read.items)
    .filter((item) => item.sk <= completeTo)
    .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
  return { items, completeTo };
}

/** A `since` that is no cursor of this feed: a 400 naming the parameter. */
export class InvalidCursorError extends HttpProblem {
  override name = 'InvalidCursorError';
  constructor(reason = 'is not a cursor of this feed: send `now` or a `next` exactly as it was given') {
    super('validation-error', `The query string is invalid: since ${reason}`, { errors: [{ field: 'since', message: reason }] });
  }
}

/** A cursor older than the feed's retention: changes after it may be gone, so the client must list again (410). */
export class CursorExpiredError extends HttpProblem {
  override name = 'CursorExpiredError';
  constructor() {
    super(
      'cursor-expired',
      `The cursor is older than the ${CHANGE_FEED.retentionDays} days of changes the feed keeps: take since=now, list the events again, then walk from that cursor`,
    );
  }
}
