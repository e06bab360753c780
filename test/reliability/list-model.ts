// The reference model of GET /special-events for the property tests of large events.
import type { SpecialEventBody } from '../support/api-client.ts';

/** DynamoDB compares string keys as UTF-8 bytes; JavaScript's `<` compares UTF-16 code units. */
export function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Events with a date in [start, end], by first date in range, then name (UTF-8 bytes), then id. */
export function modelList(events: SpecialEventBody[], start: string, end: string): SpecialEventBody[] {
  return events
    .map((event) => ({ event, first: event.dates.find((date) => date >= start && date <= end) }))
    .filter((entry): entry is { event: SpecialEventBody; first: string } => entry.first !== undefined)
    .sort((a, b) => byUtf8(a.first, b.first) || byUtf8(a.event.name, b.event.name) || byUtf8(a.event.eventId, b.event.eventId))
    .map((entry) => entry.event);
}
