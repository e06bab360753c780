// schema.org JSON-LD over real HTTP (local API, real handler bundles, DynamoDB Local): both event
// reads with `Accept: application/ld+json`, each answer expanded by a JSON-LD processor (npm
// `jsonld`) and checked for Google's required and recommended event properties; and content
// negotiation as RFC 9110 has it (Vary, q values, 406, HEAD, If-None-Match, one ETag per representation).
//
// The network is closed, so https://schema.org's context cannot be fetched: the document loader
// serves a stand-in that maps the terms the answers use to https://schema.org/ (with `@vocab`) and
// types the IRI-valued ones (`url`, the enumerations) as `@id`, as schema.org's own context does.
// The answers themselves name "https://schema.org", as Google expects.
import jsonld from 'jsonld';
import { api, createEvent, privateYear } from '../support/api-client.ts';

const SCHEMA = 'https://schema.org/';
/** Vary without the compression's token (a HEAD or a short answer is not compressed: lib/local/response-compression.ts). */
const withoutCoding = (vary: string | null) => vary?.replace(/, Accept-Encoding$/, '');
const LD = { Accept: 'application/ld+json' };

const SCHEMA_ORG_STAND_IN = {
  '@context': {
    '@vocab': SCHEMA,
    ...Object.fromEntries(
      ['url', 'eventStatus', 'eventAttendanceMode', 'availability', 'itemListOrder'].map((term) => [term, { '@type': '@id' }]),
    ),
  },
};

async function expand(document: unknown): Promise<Node[]> {
  const documentLoader = (url: string) => {
    if (url.replace(/\/$/, '') !== 'https://schema.org') throw new Error(`no document ${url} offline`);
    return Promise.resolve({ contextUrl: undefined, documentUrl: url, document: SCHEMA_ORG_STAND_IN });
  };
  return (await jsonld.expand(document as jsonld.JsonLdDocument, { documentLoader })) as Node[];
}

type Node = Record<string, unknown[] | undefined> & { '@id'?: string; '@type'?: string[] };

/** Every node of an expanded document that states more than its `@id`, by `@id`: what a node reference names. */
function nodesById(nodes: unknown, index = new Map<string, Node>()): Map<string, Node> {
  if (Array.isArray(nodes)) for (const node of nodes) nodesById(node, index);
  else if (nodes !== null && typeof nodes === 'object') {
    const node = nodes as Node;
    if (typeof node['@id'] === 'string' && Object.keys(node).length > 1) index.set(node['@id'], node);
    for (const [key, values] of Object.entries(node)) if (key !== '@id' && key !== '@type') nodesById(values, index);
  }
  return index;
}

/** The expanded values of a schema.org property. */
const all = (node: Node, property: string) => (node[`${SCHEMA}${property}`] ?? []) as (Node & { '@value'?: unknown })[];
const one = (node: Node, property: string) => {
  const values = all(node, property);
  expect([property, values.length]).toEqual([property, 1]);
  return values[0] as Node & { '@value'?: unknown };
};
const value = (node: Node, property: string) => one(node, property)['@value'];
const iri = (node: Node, property: string) => one(node, property)['@id'];

interface EventFields {
  eventId: string;
  dates: string[];
  name: string;
  eventDescription: string;
  location: string;
  price: number;
}

/**
 * Google's event structured data (developers.google.com/search/docs/appearance/structured-data/event),
 * on the event and on each date: required name, startDate, location (a Place with an address, named
 * by `@id` in a date); recommended endDate, eventStatus, offers (price, priceCurrency, url,
 * availability), eventAttendanceMode. image, performer and offers.validFrom are absent: the API
 * keeps none of them (docs/API.md, "JSON-LD").
 */
function expectGoogleEvent(node: Node, event: EventFields, index: Map<string, Node>) {
  expect(node['@type']).toEqual([`${SCHEMA}ExhibitionEvent`]);
  expect(value(node, 'name')).toBe(event.name);
  expect(value(node, 'startDate')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(value(node, 'endDate')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  const reference = one(node, 'location');
  const place = index.get(reference['@id'] ?? '') ?? reference;
  expect(place['@type']).toEqual([`${SCHEMA}Place`]);
  expect(value(place, 'name')).toBe('Example Museum');
  const address = one(place, 'address');
  expect(address['@type']).toEqual([`${SCHEMA}PostalAddress`]);
  for (const [property, expected] of [
    ['streetAddress', '1 Museum Street'],
    ['addressLocality', 'Springfield'],
    ['postalCode', '12345'],
    ['addressCountry', 'US'],
  ] as const)
    expect([property, value(address, property)]).toEqual([property, expected]);
  expect(value(one(place, 'containsPlace'), 'name')).toBe(event.location);
  expect(iri(node, 'eventStatus')).toBe(`${SCHEMA}EventScheduled`);
  expect(iri(node, 'eventAttendanceMode')).toBe(`${SCHEMA}OfflineEventAttendanceMode`);
  const offer = one(node, 'offers');
  expect(offer['@type']).toEqual([`${SCHEMA}Offer`]);
  expect(value(offer, 'price')).toBe(event.price);
  expect(value(offer, 'priceCurrency')).toBe('USD');
  expect(iri(offer, 'url')).toBe(iri(node, 'url'));
  expect(iri(offer, 'availability')).toBe(`${SCHEMA}InStock`);
  expect(all(offer, 'validFrom')).toEqual([]);
  for (const absent of ['image', 'performer']) expect([absent, all(node, absent)]).toEqual([absent, []]);
}

/** The event as a whole (the answer to its GET, an item of a list page): also its description and organizer, from its first date to its last. */
function expectWholeEvent(node: Node, event: EventFields, index: Map<string, Node>) {
  const page = `https://museum.example/events/${event.eventId}`;
  expect([node['@id'], iri(node, 'url')]).toEqual([page, page]);
  expectGoogleEvent(node, event, index);
  expect([value(node, 'startDate'), value(node, 'endDate')]).toEqual([event.dates[0], event.dates.at(-1)]);
  expect(value(node, 'description')).toBe(event.eventDescription);
  const organizer = one(node, 'organizer');
  expect([organizer['@type'], value(organizer, 'name'), iri(organizer, 'url')]).toEqual([
    [`${SCHEMA}Organization`],
    'Example Museum',
    'https://museum.example',
  ]);
}

/** The event and its sub-events, each checked as a Google event; the sub-events' dates are the event's. */
function expectEventWithDates(node: Node, event: EventFields, index: Map<string, Node>) {
  expectWholeEvent(node, event, index);
  const page = `https://museum.example/events/${event.eventId}`;
  const subEvents = all(node, 'subEvent');
  expect(subEvents.map((sub) => [sub['@id'], value(sub, 'startDate'), value(sub, 'endDate')])).toEqual(
    event.dates.map((date) => [`${page}#${date}`, date, date]),
  );
  for (const sub of subEvents) expectGoogleEvent(sub, event, index);
}

describe('GET with Accept: application/ld+json', () => {
  test('an event: schema.org ExhibitionEvent JSON-LD with one sub-event per date, every node what Google requires and recommends', async () => {
    const year = privateYear();
    const event = await createEvent({ dates: [`${year}-06-01`, `${year}-06-03`], price: 12.5 });
    const response = await api('GET', `/special-events/${event.eventId}`, { headers: LD });
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'application/ld+json']);
    expect((response.body as Record<string, unknown>)['@context']).toBe('https://schema.org');
    const expanded = await expand(response.body);
    expect(expanded).toHaveLength(1);
    expectEventWithDates(expanded[0] as Node, event, nodesById(expanded));
  });

  test('a list page: an ItemList of the events as wholes (their dates are in their own answers), positions counted from the first page', async () => {
    const year = privateYear();
    const first = await createEvent({ dates: [`${year}-07-01`], name: 'First' });
    const second = await createEvent({ dates: [`${year}-07-02`, `${year}-07-04`], name: 'Second', price: 0 });
    const path = `/special-events?startDate=${year}-07-01&endDate=${year}-07-31&limit=1`;
    const pages = [await api('GET', path, { headers: LD }), await api('GET', `${path}&page=2`, { headers: LD })];
    const items: [Node, Map<string, Node>][] = [];
    for (const [index, page] of pages.entries()) {
      expect([page.status, page.headers.get('content-type')]).toEqual([200, 'application/ld+json']);
      expect(page.headers.get('link')).toContain('rel="first"');
      const expanded = await expand(page.body);
      const [list] = expanded as [Node];
      expect(list['@type']).toEqual([`${SCHEMA}ItemList`]);
      expect(value(list, 'numberOfItems')).toBe(1);
      const element = one(list, 'itemListElement');
      expect([element['@type'], value(element, 'position')]).toEqual([[`${SCHEMA}ListItem`], index + 1]);
      items.push([one(element, 'item'), nodesById(expanded)]);
    }
    for (const [index, event] of [first, second].entries()) {
      const [item, nodes] = items[index] as [Node, Map<string, Node>];
      expectWholeEvent(item, event, nodes);
      expect(all(item, 'subEvent')).toEqual([]);
    }
  });
});

describe('content negotiation (RFC 9110)', () => {
  test('JSON stays as it was: the same bytes and ETag with no Accept, */*, application/json; every answer varies with Accept', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-08-01`] });
    const path = `/special-events/${event.eventId}`;
    const accepts: Record<string, string>[] = [
      {},
      { Accept: '*/*' },
      { Accept: 'application/json' },
      { Accept: 'application/ld+json;q=0.5, application/json' },
    ];
    const answers = await Promise.all(accepts.map((headers) => api('GET', path, { headers })));
    for (const answer of answers) {
      expect([answer.status, answer.text, answer.headers.get('etag')]).toEqual([200, JSON.stringify(event), '"1"']);
      expect([answer.headers.get('content-type'), answer.headers.get('vary')]).toEqual([
        'application/json',
        'Authorization, Origin, Accept',
      ]);
    }
    const ld = await api('GET', path, { headers: { Accept: 'text/html;q=0.9, application/json;q=0.5, application/ld+json' } });
    expect(ld.headers.get('content-type')).toBe('application/ld+json');
    // The local gateway compresses a JSON-LD answer of 1 KiB or more, as the stage does (Vary: Accept-Encoding then).
    expect([withoutCoding(ld.headers.get('vary')), ld.headers.get('cache-control')]).toEqual([
      'Authorization, Origin, Accept',
      'private, no-cache',
    ]);
  });

  test('each representation has its own strong ETag: If-None-Match is a 304 only for the tag of the representation asked for', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-09-01`] });
    for (const path of [`/special-events/${event.eventId}`, `/special-events?startDate=${event.dates[0]}&endDate=${event.dates[0]}`]) {
      const json = await api('GET', path);
      const ld = await api('GET', path, { headers: LD });
      const [jsonTag, ldTag] = [json.headers.get('etag') ?? '', ld.headers.get('etag') ?? ''];
      expect(ldTag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect(ldTag).not.toBe(jsonTag);
      expect((await api('GET', path, { headers: LD })).headers.get('etag')).toBe(ldTag);
      const notModified = await api('GET', path, { headers: { ...LD, 'If-None-Match': ldTag } });
      expect([notModified.status, notModified.text, notModified.headers.get('etag'), notModified.headers.get('vary')]).toEqual([
        304,
        '',
        ldTag,
        'Authorization, Origin, Accept',
      ]);
      expect((await api('GET', path, { headers: { ...LD, 'If-None-Match': jsonTag } })).status).toBe(200);
      expect((await api('GET', path, { headers: { 'If-None-Match': ldTag } })).status).toBe(200);
      expect((await api('GET', path, { headers: { ...LD, 'If-Match': jsonTag } })).status).toBe(412);
    }
  });

  test('HEAD answers the JSON-LD GET without content', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-10-01`] });
    const path = `/special-events/${event.eventId}`;
    const get = await api('GET', path, { headers: LD });
    const head = await api('HEAD', path, { headers: LD });
    expect([head.status, head.text]).toEqual([200, '']);
    for (const name of ['etag', 'cache-control', 'content-type'])
      expect([name, head.headers.get(name)]).toEqual([name, get.headers.get(name)]);
    expect([withoutCoding(head.headers.get('vary')), head.headers.get('content-length')]).toEqual([
      'Authorization, Origin, Accept',
      String(Buffer.byteLength(get.text)),
    ]);
  });

  test('what is not offered is a 406 problem naming both media types, with Vary: Accept; HEAD gets it without content', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-11-01`] });
    for (const [path, accept] of [
      [`/special-events/${event.eventId}`, 'text/html'],
      ['/special-events', 'application/json;q=0, application/ld+json;q=0'],
      [`/special-events/${event.eventId}`, 'application/ld+json;profile="http://www.w3.org/ns/json-ld#expanded"'],
    ] as const) {
      const answer = await api('GET', path, { headers: { Accept: accept } });
      expect([answer.status, answer.headers.get('content-type')]).toEqual([406, 'application/problem+json']);
      expect(answer.body).toMatchObject({
        type: 'https://museum.example/problems/not-acceptable',
        detail: expect.stringContaining('application/json, application/ld+json') as unknown,
      });
      expect(answer.headers.get('vary')).toMatch(/\bAccept\b/);
      const head = await api('HEAD', path, { headers: { Accept: accept } });
      expect([head.status, head.text]).toEqual([406, '']);
    }
  });
});
