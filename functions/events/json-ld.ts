// The schema.org representation of special events (JSON-LD, compacted against https://schema.org),
// shaped by Google's event structured data guidance
// (https://developers.google.com/search/docs/appearance/structured-data/event): an event is an
// `ExhibitionEvent` (schema.org: "an event at a museum, library, archive, tourist information
// center, ..."), and since its dates need not be consecutive, each date is a sub-event of its own
// (Google: a separate Event for each performance), with its own name, dates, location and offer. The
// parent spans the first to the last date. docs/API.md ("JSON-LD") says what is absent and why.
import type { MuseumSettings } from './museum-settings.ts';
import type { SpecialEvent } from './event-schema.ts';

export const SCHEMA_ORG_CONTEXT = 'https://schema.org';
const SCHEMA = 'https://schema.org/';

type Node = Record<string, unknown>;

/** The museum's page of an event: MUSEUM_EVENT_PAGE_URL with the id in place of `{eventId}`. */
export function eventPageUrl(museum: MuseumSettings, eventId: string): string {
  return museum.eventPageUrl.replace('{eventId}', encodeURIComponent(eventId));
}

/** Where every event happens: the museum (with its address) containing the event's own `location`, such as a gallery. */
function place(museum: MuseumSettings, location: string, id: string): Node {
  return {
    '@type': 'Place',
    '@id': id,
    name: museum.name,
    address: {
      '@type': 'PostalAddress',
      streetAddress: museum.streetAddress,
      addressLocality: museum.addressLocality,
      postalCode: museum.postalCode,
      addressCountry: museum.addressCountry,
    },
    containsPlace: { '@type': 'Place', name: location },
  };
}

/** Who organises it: the museum, at its site's origin. */
function organizer(museum: MuseumSettings): Node {
  return { '@type': 'Organization', name: museum.name, url: new URL(museum.eventPageUrl.replace('{eventId}', '')).origin };
}

/**
 * What the event and each of its dates state: every property Google requires of an event and the
 * short recommended ones. The place is stated once, on the event, and named by its `@id` in each
 * date, so that an answer grows by a few hundred bytes per date, not by the description and
 * address each time (366 dates of the longest texts stay far below Lambda's 6 MB answer limit).
 */
function occurrence(event: SpecialEvent, museum: MuseumSettings, url: string, startDate: string, endDate: string): Node {
  return {
    name: event.name,
    url,
    startDate,
    endDate,
    // Deleted events are not read (a 404); a read event is scheduled on each of its dates.
    eventStatus: `${SCHEMA}EventScheduled`,
    eventAttendanceMode: `${SCHEMA}OfflineEventAttendanceMode`,
    location: { '@id': `${url}#place` },
    // No capacity is kept: tickets are on sale (InStock) until the date; no sales start is kept (no validFrom).
    offers: { '@type': 'Offer', price: event.price, priceCurrency: museum.priceCurrency, url, availability: `${SCHEMA}InStock` },
  };
}

/** An event as a whole, from its first date to its last: an item of a list page. */
export function eventSummaryNode(event: SpecialEvent, museum: MuseumSettings): Node {
  const url = eventPageUrl(museum, event.eventId);
  return {
    '@type': 'ExhibitionEvent',
    '@id': url,
    ...occurrence(event, museum, url, event.dates[0] as string, event.dates[event.dates.length - 1] as string),
    description: event.eventDescription,
    location: place(museum, event.location, `${url}#place`),
    organizer: organizer(museum),
  };
}

/** One event: the whole (eventSummaryNode) with one sub-event per date, each an all-day event (a date without a time). */
export function eventNode(event: SpecialEvent, museum: MuseumSettings): Node {
  const summary = eventSummaryNode(event, museum);
  const url = summary['@id'] as string;
  return {
    ...summary,
    subEvent: event.dates.map((date) => ({
      '@type': 'ExhibitionEvent',
      '@id': `${url}#${date}`,
      ...occurrence(event, museum, url, date, date),
    })),
  };
}

/** GET /special-events/{eventId} as JSON-LD. */
export function eventDocument(event: SpecialEvent, museum: MuseumSettings): Node {
  return { '@context': SCHEMA_ORG_CONTEXT, ...eventNode(event, museum) };
}

/**
 * A page of GET /special-events as JSON-LD: an `ItemList` (Google's form for a list of items on one
 * page, "all-in-one": each ListItem holds the event). An item is the event as a whole, without its
 * per-date sub-events, which are in the event's own answer: 30 events of 366 dates each would
 * pass Lambda's 6 MB answer limit. `position` counts from the first page, so it does not restart on page 2.
 */
export function eventListDocument(events: readonly SpecialEvent[], museum: MuseumSettings, firstPosition: number): Node {
  return {
    '@context': SCHEMA_ORG_CONTEXT,
    '@type': 'ItemList',
    itemListOrder: `${SCHEMA}ItemListOrderAscending`,
    numberOfItems: events.length,
    itemListElement: events.map((event, index) => ({
      '@type': 'ListItem',
      position: firstPosition + index,
      item: eventSummaryNode(event, museum),
    })),
  };
}
