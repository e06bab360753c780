// What a calendar feed lists (pure: the unit tests run it without DynamoDB): one entry per upcoming
// date of every event, and each upcoming date that a change of the last CHANGE_FEED.retentionDays
// took away (a PATCH without it, a DELETE of its event) as a cancelled entry, until the date has
// passed. Calendar apps keep an entry they once read until a later version (a higher SEQUENCE)
// says otherwise, so a date that silently vanished would stay in visitors' calendars: RFC 5545
// §3.8.1.11 (STATUS:CANCELLED) and §3.8.7.4 (SEQUENCE).
import type { ChangeEvent } from '../changes/change-event.ts';
import type { SpecialEvent } from '../events/event-schema.ts';

export interface FeedEntry {
  /** Stable per event and date: the same entry in every answer and every app. */
  uid: string;
  eventId: string;
  date: string;
  status: 'CONFIRMED' | 'CANCELLED';
  /** The event's version (a cancellation: the version of the change that cancelled it, or later). */
  sequence: number;
  /** When this entry last changed (RFC 5545 DTSTAMP without METHOD: the last revision). */
  stamp: string;
  event: Pick<SpecialEvent, 'name' | 'location' | 'eventDescription'>;
}

/** An event as the list reads it: its fields, version and last commit time. */
export interface UpcomingEvent {
  event: SpecialEvent;
  version: number;
  updatedAt?: string | undefined;
}

export function entryUid(eventId: string, date: string): string {
  return `${eventId}-${date.replaceAll('-', '')}@special-events`;
}

interface Cancellation {
  eventId: string;
  date: string;
  version: number;
  time: string;
  event: SpecialEvent;
}

/**
 * The cancelled dates in the changes (in commit order), keyed by UID. Every later change of the
 * event (a rename, its deletion) renews its cancelled dates too: their fields, version and time,
 * so an app that read a cancelled date at one version never reads it again at a lower one.
 */
function cancellations(changes: readonly ChangeEvent[]): Map<string, Cancellation> {
  const cancelled = new Map<string, Cancellation>();
  for (const change of changes) {
    const { previous, event: next, version, eventId } = change.data;
    if (!previous) continue;
    const latest = { version, time: change.time, event: next ?? previous };
    const kept = new Set(next?.dates ?? []);
    for (const [uid, cancellation] of cancelled) {
      if (cancellation.eventId === eventId) cancelled.set(uid, { ...cancellation, ...latest });
    }
    for (const date of previous.dates) {
      if (!kept.has(date)) cancelled.set(entryUid(eventId, date), { eventId, date, ...latest });
    }
    // A date put back is no longer cancelled (if it is listed, the listing's entry wins anyway).
    for (const date of next?.dates ?? []) cancelled.delete(entryUid(eventId, date));
  }
  return cancelled;
}

/**
 * The entries for dates from `today` to `lastDate`: `upcoming` (the list's events with a date in
 * that range, current) confirmed; every cancellation of a date in the range that is not listed.
 * Ordered by date, then UID, so the same state is the same text (and ETag).
 */
export function feedEntries(
  upcoming: readonly UpcomingEvent[],
  changes: readonly ChangeEvent[],
  range: { today: string; lastDate: string },
): FeedEntry[] {
  const inRange = (date: string) => date >= range.today && date <= range.lastDate;
  const entries = new Map<string, FeedEntry>();
  const current = new Map(upcoming.map((stored) => [stored.event.eventId, stored]));
  for (const [uid, cancellation] of cancellations(changes)) {
    const { eventId, date } = cancellation;
    if (!inRange(date)) continue;
    // An event that still exists (other dates) shows its current fields, version and time on its cancelled dates too.
    const later = current.get(eventId);
    const { name, location, eventDescription } = later?.event ?? cancellation.event;
    const laterStamp = later?.updatedAt ?? '';
    entries.set(uid, {
      uid,
      eventId,
      date,
      status: 'CANCELLED',
      // Never below a version an app may have read this date with.
      sequence: Math.max(cancellation.version, later?.version ?? 0),
      stamp: laterStamp > cancellation.time ? laterStamp : cancellation.time,
      event: { name, location, eventDescription },
    });
  }
  for (const { event, version, updatedAt } of upcoming) {
    for (const date of event.dates.filter(inRange)) {
      const uid = entryUid(event.eventId, date);
      entries.set(uid, {
        uid,
        eventId: event.eventId,
        date,
        status: 'CONFIRMED',
        sequence: version,
        stamp: updatedAt ?? `${date}T00:00:00.000Z`,
        event: { name: event.name, location: event.location, eventDescription: event.eventDescription },
      });
    }
  }
  return [...entries.values()].sort((a, b) => (a.date === b.date ? (a.uid < b.uid ? -1 : 1) : a.date < b.date ? -1 : 1));
}
