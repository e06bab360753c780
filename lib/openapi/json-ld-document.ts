// The OpenAPI side of the negotiated event reads (functions/http/content-negotiation.ts,
// functions/events/json-ld.ts): the schema.org JSON-LD media type beside JSON on their 200s, its
// schemas and examples (made by the code that answers), the 406, and the headers that differ from
// other reads (Vary names Accept; the event's ETag is a version for JSON, a hash for JSON-LD).
import { eventDocument, eventListDocument } from '../../functions/events/json-ld.ts';
import type { MuseumSettings } from '../../functions/events/museum-settings.ts';
import { eventReadOffers, JSON_LD_CONTENT_TYPE, negotiate } from '../../functions/http/content-negotiation.ts';
import { READ_VARY } from '../../functions/http/read-responses.ts';
import { exampleEvent, exampleOtherEvent } from './examples.ts';
import { errorExample, problemResponse } from './problem-responses.ts';
import { SCHEMA_REF_PREFIX } from './json-schemas.ts';

/** The museum of the examples, and of the local run (lib/local/local-environment.ts): `.example` names no real site. */
export const EXAMPLE_MUSEUM: MuseumSettings = {
  name: 'Example Museum',
  streetAddress: '1 Museum Street',
  addressLocality: 'Springfield',
  postalCode: '12345',
  addressCountry: 'US',
  priceCurrency: 'USD',
  eventPageUrl: 'https://museum.example/events/{eventId}',
};

const ref = (name: string) => ({ $ref: `${SCHEMA_REF_PREFIX}${name}` });
const schemaOrg = (name: string) => ({ type: 'string', const: `https://schema.org/${name}` });
const text = (description: string) => ({ type: 'string', minLength: 1, description });
const date = (description: string) => ({ type: 'string', format: 'date', description });

const OCCURRENCE_REQUIRED = [
  '@type',
  '@id',
  'name',
  'url',
  'startDate',
  'endDate',
  'eventStatus',
  'eventAttendanceMode',
  'location',
  'offers',
];

/** What the event and each of its dates state (functions/events/json-ld.ts, occurrence()); `extra` adds to it. */
function eventNodeSchema(description: string, extra: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'object',
    description,
    required: [...OCCURRENCE_REQUIRED, ...required],
    additionalProperties: false,
    properties: {
      '@type': { const: 'ExhibitionEvent' },
      '@id': text('The museum page of the event (`MUSEUM_EVENT_PAGE_URL`); a sub-event adds `#` and its date'),
      name: text('The event name'),
      url: text("The museum's page of the event"),
      startDate: date('All-day: a date without a time'),
      endDate: date('The same date for a sub-event; the last date for the event'),
      eventStatus: { ...schemaOrg('EventScheduled'), description: 'Every event that can be read is scheduled (a deleted one is a 404)' },
      eventAttendanceMode: schemaOrg('OfflineEventAttendanceMode'),
      offers: ref('SchemaOrgOffer'),
      ...extra,
    },
  };
}

/** The event as a whole: its description, the place and the organizer are stated here only. */
const WHOLE_EVENT = {
  description: text('The event description'),
  location: ref('SchemaOrgPlace'),
  organizer: {
    type: 'object',
    required: ['@type', 'name', 'url'],
    additionalProperties: false,
    properties: { '@type': { const: 'Organization' }, name: text('The museum'), url: text("The museum site's origin") },
  },
};
const WHOLE_EVENT_REQUIRED = ['description', 'organizer'];
const SUB_EVENTS = { subEvent: { type: 'array', minItems: 1, items: ref('SchemaOrgEventDate') } };

/** components.schemas of the JSON-LD answers. */
export const JSON_LD_SCHEMAS: Record<string, Record<string, unknown>> = {
  SchemaOrgPlace: {
    type: 'object',
    description: "schema.org `Place`: the museum, with its postal address, containing the event's own `location` (a hall, a gallery)",
    required: ['@type', '@id', 'name', 'address', 'containsPlace'],
    additionalProperties: false,
    properties: {
      '@type': { const: 'Place' },
      '@id': text('The event page and `#place`: what its sub-events name as their `location`'),
      name: text('The museum name'),
      address: {
        type: 'object',
        required: ['@type', 'streetAddress', 'addressLocality', 'postalCode', 'addressCountry'],
        additionalProperties: false,
        properties: {
          '@type': { const: 'PostalAddress' },
          streetAddress: text('Street address'),
          addressLocality: text('Town or city'),
          postalCode: text('Postal code'),
          addressCountry: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code' },
        },
      },
      containsPlace: {
        type: 'object',
        required: ['@type', 'name'],
        additionalProperties: false,
        properties: { '@type': { const: 'Place' }, name: text("The event's `location`") },
      },
    },
  },
  SchemaOrgOffer: {
    type: 'object',
    description: 'schema.org `Offer`: the price of a visit, on sale (no capacity is kept), bought on the event page',
    required: ['@type', 'price', 'priceCurrency', 'url', 'availability'],
    additionalProperties: false,
    properties: {
      '@type': { const: 'Offer' },
      price: { type: 'number', minimum: 0, description: "The event's `price` (0: free)" },
      priceCurrency: { type: 'string', pattern: '^[A-Z]{3}$', description: "ISO 4217 code: the deployment's `MUSEUM_PRICE_CURRENCY`" },
      url: text("The museum's page of the event"),
      availability: schemaOrg('InStock'),
    },
  },
  SchemaOrgEventDate: eventNodeSchema(
    "schema.org `ExhibitionEvent` on one date of the event (a `subEvent`); its `location` names the event's place by `@id`",
    {
      location: {
        type: 'object',
        required: ['@id'],
        additionalProperties: false,
        properties: { '@id': text("The `@id` of the event's `location`") },
      },
    },
    [],
  ),
  SpecialEventJsonLdSummary: eventNodeSchema(
    'schema.org `ExhibitionEvent`: the special event as a whole, from its first to its last date (its dates are in its own answer)',
    WHOLE_EVENT,
    WHOLE_EVENT_REQUIRED,
  ),
  SpecialEventJsonLd: eventNodeSchema(
    'A special event as schema.org JSON-LD (compacted against `https://schema.org`): an `ExhibitionEvent` from its first to its last date, with one sub-event per date',
    { '@context': { const: 'https://schema.org' }, ...WHOLE_EVENT, ...SUB_EVENTS },
    ['@context', ...WHOLE_EVENT_REQUIRED, 'subEvent'],
  ),
  SpecialEventListJsonLd: {
    type: 'object',
    description: 'One page of special events as a schema.org `ItemList`; `position` counts from the first page',
    required: ['@context', '@type', 'itemListOrder', 'numberOfItems', 'itemListElement'],
    additionalProperties: false,
    properties: {
      '@context': { const: 'https://schema.org' },
      '@type': { const: 'ItemList' },
      itemListOrder: schemaOrg('ItemListOrderAscending'),
      numberOfItems: { type: 'integer', minimum: 0 },
      itemListElement: {
        type: 'array',
        items: {
          type: 'object',
          required: ['@type', 'position', 'item'],
          additionalProperties: false,
          properties: { '@type': { const: 'ListItem' }, position: { type: 'integer', minimum: 1 }, item: ref('SpecialEventJsonLdSummary') },
        },
      },
    },
  },
};

/** The 200 content of a negotiated read: JSON (as before) and JSON-LD, each with its example. */
export function negotiatedContent(jsonContent: Record<string, unknown>, operation: 'list' | 'get'): Record<string, unknown> {
  const [schema, summary, value] =
    operation === 'get'
      ? ['SpecialEventJsonLd', 'The event as schema.org JSON-LD', eventDocument(exampleEvent, EXAMPLE_MUSEUM)]
      : [
          'SpecialEventListJsonLd',
          'A page of two events as a schema.org ItemList',
          eventListDocument([exampleEvent, exampleOtherEvent], EXAMPLE_MUSEUM, 1),
        ];
  return { ...jsonContent, [JSON_LD_CONTENT_TYPE]: { schema: ref(schema), examples: { jsonLd: { summary, value } } } };
}

function notAcceptableExample() {
  try {
    negotiate({ headers: { accept: 'text/html' }, multiValueHeaders: {} }, eventReadOffers(true));
  } catch (error) {
    return errorExample(error as Error, 'Accept: text/html');
  }
  throw new Error('text/html was acceptable');
}

export const notAcceptableResponse = () =>
  problemResponse(
    406,
    '`Accept` accepts neither `application/json` nor `application/ld+json` (the latter only where the deployment names its museum; otherwise it is not offered). No `Accept`, or `*/*`, is JSON',
    { notAcceptable: notAcceptableExample() },
  );

/** Header components of the negotiated reads. */
export const NEGOTIATION_HEADERS = {
  NegotiatedVary: {
    description:
      'The answer depends on the credentials (roles), with CORS on the Origin, and on `Accept` (JSON or JSON-LD); an answer that may be compressed (1 KiB or more) also varies with Accept-Encoding',
    required: true,
    schema: {
      type: 'string',
      enum: [[...READ_VARY, 'Accept'].join(', '), [...READ_VARY, 'Accept', 'Accept-Encoding'].join(', ')],
      examples: [[...READ_VARY, 'Accept'].join(', ')],
    },
  },
  EventRepresentationETag: {
    description:
      "Strong entity tag: for `application/json` the event's version (send it in `If-Match` to update or delete only that version); for `application/ld+json` a hash of that answer's exact bytes, so the two representations never share a tag",
    required: true,
    schema: { type: 'string', pattern: '^"([1-9][0-9]*|[A-Za-z0-9_-]{22})"$', examples: ['"3"'] },
  },
} as const;
