// Proactive negotiation of the event reads (RFC 9110 §12.5.1) and the JSON-LD documents, in-process:
// which representation an Accept field selects, when it is a 406, and the shape of each document.
import { eventReadOffers, JSON_OFFER, negotiate, parseAccept, preferredOffer } from '../../functions/http/content-negotiation.ts';
import type { MuseumSettings } from '../../functions/events/museum-settings.ts';
import { eventDocument, eventListDocument } from '../../functions/events/json-ld.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { addDays } from '../../functions/events/calendar-dates.ts';
import { problemOf } from '../support/problem-of.ts';

const OFFERS = eventReadOffers(true);
const chosen = (...lines: string[]) => preferredOffer(lines, OFFERS)?.type;

describe('Accept selects the representation', () => {
  test.each([
    [[], 'application/json'],
    [['*/*'], 'application/json'],
    [['application/*'], 'application/json'],
    [['application/json'], 'application/json'],
    [['application/ld+json'], 'application/ld+json'],
    [['APPLICATION/LD+JSON'], 'application/ld+json'],
    [['application/ld+json, application/json;q=0.9'], 'application/ld+json'],
    [['application/json;q=0.5, application/ld+json;q=0.8'], 'application/ld+json'],
    [['application/ld+json;q=0.5, */*;q=0.9'], 'application/json'],
    [['text/html, application/ld+json;q=0.1'], 'application/ld+json'],
    // The more specific range wins over `*/*`, whatever the order.
    [['application/json;q=0, */*'], 'application/ld+json'],
    [['*/*;q=0.1', 'application/ld+json'], 'application/ld+json'],
    // Field lines are one list (RFC 9110 §5.3).
    [['text/html', 'application/ld+json'], 'application/ld+json'],
    [['application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted"'], 'application/ld+json'],
    [
      ['application/ld+json; profile="http://www.w3.org/ns/json-ld#flattened http://www.w3.org/ns/json-ld#compacted"'],
      'application/ld+json',
    ],
    [['application/json; charset=UTF-8'], 'application/json'],
    // A member this parser cannot read is ignored; a field of nothing readable accepts anything.
    [['not a media type'], 'application/json'],
    [['text/html;q=2, application/ld+json'], 'application/ld+json'],
  ])('%j answers %s', (lines, type) => {
    expect(chosen(...lines)).toBe(type);
  });

  test.each([
    ['text/html'],
    ['application/problem+json'],
    ['application/json;q=0, application/ld+json;q=0'],
    ['*/*;q=0'],
    ['application/ld+json;profile="http://www.w3.org/ns/json-ld#expanded"'],
    ['application/json; charset=iso-8859-1'],
    ['application/json;q=1.5'],
  ])('%s accepts neither', (line) => {
    expect(chosen(line)).toBeUndefined();
  });

  test('a q value is read to three decimals and a comma inside quotes is no separator', () => {
    expect(parseAccept(['a/b;q=0.123, c/d;x="1,2";q=0.5'])).toEqual([
      { type: 'a', subtype: 'b', parameters: new Map(), q: 0.123 },
      { type: 'c', subtype: 'd', parameters: new Map([['x', '1,2']]), q: 0.5 },
    ]);
  });

  test('nothing acceptable is a 406 problem that lists what is offered and varies with Accept', () => {
    const problem = problemOf(() => negotiate({ headers: { accept: 'text/html' }, multiValueHeaders: {} }, OFFERS));
    expect(problem.headers).toEqual({ Vary: 'Accept' });
    expect(problem.problem).toMatchObject({
      status: 406,
      type: 'https://museum.example/problems/not-acceptable',
      detail: expect.stringContaining('application/json, application/ld+json') as unknown,
    });
  });

  test('without the museum settings JSON-LD is not offered: asking for it only is a 406', () => {
    expect(preferredOffer(['application/ld+json'], eventReadOffers(false))).toBeUndefined();
    expect(preferredOffer(['application/ld+json, */*;q=0.1'], eventReadOffers(false))).toBe(JSON_OFFER);
  });
});

const MUSEUM: MuseumSettings = {
  name: 'Example Museum',
  streetAddress: '1 Museum Street',
  addressLocality: 'Springfield',
  postalCode: '12345',
  addressCountry: 'US',
  priceCurrency: 'USD',
  eventPageUrl: 'https://museum.example/events/{eventId}',
};

describe('the JSON-LD documents', () => {
  const event = {
    eventId: '3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b',
    name: 'Night at the museum',
    location: 'Main hall',
    eventDescription: 'Torches and tales',
    dates: ['2031-02-01', '2031-02-03'],
    price: 0,
  };

  test('an event is a parent spanning its dates with one all-day sub-event per date, which names the place by @id', () => {
    const document = eventDocument(event, MUSEUM);
    const url = `https://museum.example/events/${event.eventId}`;
    expect(document).toMatchObject({ '@context': 'https://schema.org', '@type': 'ExhibitionEvent', '@id': url, url });
    expect(document).toMatchObject({
      startDate: '2031-02-01',
      endDate: '2031-02-03',
      description: event.eventDescription,
      location: {
        '@type': 'Place',
        '@id': `${url}#place`,
        name: 'Example Museum',
        address: { '@type': 'PostalAddress', addressCountry: 'US' },
      },
      organizer: { '@type': 'Organization', name: 'Example Museum', url: 'https://museum.example' },
    });
    const subEvents = document.subEvent as Record<string, unknown>[];
    expect(subEvents.map((sub) => [sub['@id'], sub.startDate, sub.endDate])).toEqual([
      [`${url}#2031-02-01`, '2031-02-01', '2031-02-01'],
      [`${url}#2031-02-03`, '2031-02-03', '2031-02-03'],
    ]);
    for (const sub of subEvents) {
      expect(sub).toMatchObject({
        name: event.name,
        location: { '@id': `${url}#place` },
        offers: { '@type': 'Offer', price: 0, priceCurrency: 'USD', url, availability: 'https://schema.org/InStock' },
        eventStatus: 'https://schema.org/EventScheduled',
      });
    }
  });

  test("the largest event's answer and the largest list page stay far below Lambda's 6 MB answer limit", () => {
    const longest = {
      ...event,
      name: '😀'.repeat(LIMITS.nameLength),
      location: '😀'.repeat(LIMITS.locationLength),
      eventDescription: '😀'.repeat(LIMITS.descriptionLength),
      dates: Array.from({ length: LIMITS.maxDates }, (_, day) => addDays('2032-01-01', day)),
    };
    const museum = { ...MUSEUM, name: '😀'.repeat(200), streetAddress: '😀'.repeat(200), addressLocality: '😀'.repeat(100) };
    const bytes = (document: unknown) => Buffer.byteLength(JSON.stringify(document));
    expect(bytes(eventDocument(longest, museum))).toBeLessThan(1_500_000);
    expect(bytes(eventListDocument(Array(LIMITS.maxListLimit).fill(longest), museum, 1))).toBeLessThan(1_500_000);
  });

  test('a list page is an ItemList of whole events (no sub-events) whose positions continue from earlier pages', () => {
    const document = eventListDocument([event], MUSEUM, 11);
    expect(document).toMatchObject({ '@type': 'ItemList', numberOfItems: 1, itemListElement: [{ '@type': 'ListItem', position: 11 }] });
    const [element] = document.itemListElement as { item: Record<string, unknown> }[];
    expect(element?.item).toMatchObject({ '@type': 'ExhibitionEvent', startDate: '2031-02-01', endDate: '2031-02-03' });
    expect(element?.item.subEvent).toBeUndefined();
  });
});
