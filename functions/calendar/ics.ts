// A feed's entries as an iCalendar object (RFC 5545), written by ical-generator: one VEVENT per
// entry, all-day (DTSTART;VALUE=DATE and DTEND the next day, §3.6.1: an all-day event's DTEND is
// exclusive), no METHOD (a published calendar, not a scheduling message: §3.7.2), so DTSTAMP is
// the entry's last revision (§3.8.7.2) and the same state renders the same bytes (the ETag).
import ical, { ICalEventStatus } from 'ical-generator';
import { addDays } from '../events/calendar-dates.ts';
import { CALENDAR_FEEDS } from './feed-rules.ts';
import type { FeedEntry } from './feed-entries.ts';

export const CALENDAR_MEDIA_TYPE = 'text/calendar';
/** RFC 5545 §8.1: UTF-8 is the charset (and the default); sent explicitly for clients that guess otherwise. */
export const CALENDAR_CONTENT_TYPE = `${CALENDAR_MEDIA_TYPE}; charset=utf-8`;

const utcMidnight = (date: string) => new Date(`${date}T00:00:00.000Z`);

/** `eventUrl(eventId)`: the absolute URL of the event's resource (the URL property). */
export function renderCalendar(entries: readonly FeedEntry[], eventUrl: (eventId: string) => string): string {
  const calendar = ical({
    name: 'Museum special events',
    prodId: { company: 'museum.example', product: 'special-events', language: 'EN' },
    ttl: CALENDAR_FEEDS.refreshSeconds,
  });
  for (const entry of entries) {
    calendar.createEvent({
      id: entry.uid,
      // Dates at UTC midnight: ical-generator writes an all-day date from the Date's UTC fields.
      start: utcMidnight(entry.date),
      end: utcMidnight(addDays(entry.date, 1)),
      allDay: true,
      stamp: new Date(entry.stamp),
      sequence: entry.sequence,
      status: entry.status === 'CANCELLED' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
      summary: entry.event.name,
      location: entry.event.location,
      description: entry.event.eventDescription,
      url: eventUrl(entry.eventId),
    });
  }
  return calendar.toString();
}
