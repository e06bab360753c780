// Generators (fast-check arbitraries) of bad HTTP requests for the five special-event routes: malformed JSON,
// wrong types, huge and odd Unicode strings, bad numbers and dates, bad ids, odd query strings,
// wrong methods and content types, oversized bodies, broken Authorization and other headers.
// Some requests turn out valid (e.g. `APPLICATION/JSON`): that is fine, the fuzz only demands
// that no request breaks the API. Every date a request could get stored with lies in the fuzz's
// reserved year, so the events the fuzz creates never appear in another test's list.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { LIMITS } from '../../functions/events/limits.ts';
import { matchedResourcePath } from '../../lib/local/request-target.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';

export const FUZZ_CATEGORIES = [
  'malformed-json',
  'wrong-types',
  'huge-and-unicode-strings',
  'bad-numbers',
  'bad-dates',
  'bad-ids',
  'odd-query',
  'wrong-method-or-path',
  'wrong-content-type',
  'oversized-body',
  'broken-authorization',
  'odd-headers',
  'calendar-end',
  'preconditions',
  'byte-level-bodies',
  'invisible-text',
] as const;
export type FuzzCategory = (typeof FUZZ_CATEGORIES)[number];

export interface FuzzRequest {
  category: FuzzCategory;
  method: string;
  /** Request target below the base path (`/v1.1`), already percent-encoded, query included. */
  path: string;
  /** Name/value pairs: a name may repeat. Authorization is added by the runner unless present. */
  headers: [string, string][];
  body?: string | Buffer;
  /** Send without any Authorization header. */
  anonymous?: boolean;
  /** Credentials to use when no Authorization header is given: editor unless said otherwise. */
  as?: 'editor' | 'viewer';
  /** The one status the request's class calls for (a 503 is always allowed), where it is certain. */
  expectedStatus?: number;
}

export interface FuzzContext {
  /** An event that exists for the whole run (PATCHes may change it, nothing deletes it). */
  targetId: string;
  editorAuthorization: string;
  viewerAuthorization: string;
}

const YEAR = RESERVED_YEARS.fuzz;
const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
const EVENT_FIELDS = ['name', 'location', 'eventDescription', 'dates', 'price'] as const;

const fuzzDate = fc.integer({ min: 0, max: 364 }).map((day) => dayOfYear(YEAR, day));
const validBody = fc.record({
  name: fc.constantFrom('Fuzz', 'Fuzz night', 'Fuzzing 🦕'),
  location: fc.constantFrom('Lab', 'Basement'),
  eventDescription: fc.constant('Created by the reliability fuzz'),
  dates: fc.array(fuzzDate, { minLength: 1, maxLength: 3 }),
  price: fc.constantFrom(0, 5, 19.99),
});
type Body = Record<string, unknown>;

/** Removes what Node's HTTP client refuses in a header value (it only sends tab and latin1 printables). */
function headerSafe(value: string): string {
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
}

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

function writeRoute(context: FuzzContext) {
  return fc.constantFrom<['POST' | 'PATCH', string]>(['POST', '/special-events'], ['PATCH', `/special-events/${context.targetId}`]);
}

function withBody(category: FuzzCategory, context: FuzzContext, body: fc.Arbitrary<string | Buffer>): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(writeRoute(context), body)
    .map(([[method, path], text]) => ({ category, method, path, headers: [JSON_TYPE], body: text }));
}

/** `{...valid body, field: <raw JSON text>}` without going through JSON.stringify. */
function withRawField(body: Body, field: string, rawValue: string): string {
  const rest = JSON.stringify({ ...body, [field]: undefined });
  return rest === '{}' ? `{"${field}":${rawValue}}` : `{"${field}":${rawValue},${rest.slice(1)}`;
}

const malformedJson = (context: FuzzContext) =>
  withBody(
    'malformed-json',
    context,
    fc.oneof(
      // Truncated at a random point.
      validBody.chain((body) => {
        const text = JSON.stringify(body);
        return fc.integer({ min: 0, max: text.length - 1 }).map((cut) => text.slice(0, cut));
      }),
      // A stray character inserted at a random point.
      fc
        .tuple(validBody, fc.nat(), fc.constantFrom('{', '}', '"', ',', ':', '\\', '\u0000', 'NaN', '\ufeff', ']', "'", '//'))
        .map(([body, at, insert]) => {
          const text = JSON.stringify(body);
          const position = at % (text.length + 1);
          return text.slice(0, position) + insert + text.slice(position);
        }),
      fc.constantFrom(
        '{name: "x"}',
        "{'name':'x'}",
        '{"name":"x",}',
        '[1,2',
        '/* comment */{}',
        '\ufeff{}',
        '{"a":"\\x41"}',
        '{"a":"\\u12"}',
        '{"a":"unterminated}',
        '{"a" "b"}',
        '{"a":1}{"b":2}',
        '{"name":"x"}\u0000',
        'undefined',
        '{'.repeat(5_000),
        '['.repeat(30_000),
        `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
        `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
        'null',
        'true',
        '42',
        '"a string"',
        '[]',
        '',
        '   ',
      ),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    ),
  );

const wrongTypes = (context: FuzzContext) =>
  withBody(
    'wrong-types',
    context,
    fc.oneof(
      fc
        .tuple(
          validBody,
          fc.dictionary(
            fc.constantFrom(...EVENT_FIELDS, 'eventId', 'version', 'pk', 'sk', 'gsi1pk', 'createdAt'),
            fc.jsonValue({ maxDepth: 2 }),
            {
              minKeys: 1,
              maxKeys: 3,
            },
          ),
          fc.subarray([...EVENT_FIELDS]),
        )
        .map(([body, overrides, dropped]) => {
          const result: Body = { ...body, ...overrides };
          // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the generator drops the fields it drew from the body on purpose
          for (const field of dropped) delete result[field];
          return JSON.stringify(result);
        }),
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      validBody.map((body) => JSON.stringify([body])),
      fc.constantFrom(
        '{"__proto__":{"role":"editor","isAdmin":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '{"name":"Fuzz","__proto__":{"price":1}}',
        '{"name":{"toString":"x"}}',
        '{"dates":{"length":1,"0":"9990-01-01"}}',
      ),
    ),
  );

const NASTY_UNITS = [
  '\u0000',
  '\u0007',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u200b',
  '\u200e',
  '\u202e',
  '\ufeff',
  '\ufffd',
  '\ud800',
  '\udfff',
  '🦕',
  'e\u0301',
  '\u2028',
  '\u3000',
  ' ',
  '\t',
  '\n',
  'ñ',
  '中',
];
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.constantFrom(...NASTY_UNITS), maxLength: 60 }),
  fc.integer({ min: LIMITS.nameLength - 2, max: LIMITS.descriptionLength + 2 }).map((length) => 'x'.repeat(length)),
  fc.integer({ min: 1, max: 30_000 }).map((length) => '界'.repeat(length)),
  fc.constantFrom(
    '',
    ' ',
    '\u00a0',
    '<script>alert(1)</script>',
    "'; DROP TABLE events;--",
    '${jndi:ldap://x/a}',
    '{{7*7}}',
    '%s%n%x',
    '../../etc/passwd',
    'EVENT#x',
    'a\u0000b',
  ),
);

const hugeAndUnicodeStrings = (context: FuzzContext) =>
  withBody(
    'huge-and-unicode-strings',
    context,
    fc.oneof(
      fc
        .tuple(validBody, fc.constantFrom('name', 'location', 'eventDescription', 'dates', 'price'), nastyString)
        .map(([body, field, value]) => JSON.stringify({ ...body, [field]: field === 'dates' ? [value] : value })),
      // Bytes that are not UTF-8 inside a string.
      fc.tuple(validBody, fc.uint8Array({ minLength: 1, maxLength: 8 })).map(([body, bytes]) =>
        Buffer.concat([
          Buffer.from(`{"name":"`),
          Buffer.from(bytes.map((byte) => byte | 0x80)),
          Buffer.from(
            `",${JSON.stringify(body)
              .slice(1)
              .replace(/^"name":"[^"]*",/, '')}`,
          ),
        ]),
      ),
    ),
  );

const RAW_NUMBERS = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '-0.01',
  '-1',
  '1e-7',
  '0.001',
  '1000000.01',
  '1e6',
  '1e21',
  '"25"',
  'true',
  'null',
  '[]',
  '{}',
  '-0',
  '0.30000000000000004',
  '9007199254740993',
  '1.005',
  '1E2',
  '12.345',
  '0x10',
  '01',
  '.5',
  '+1',
  '99999999999999999999999999999999999999',
  // Numbers that a double rounds to a valid price: judged on their text, each is a 400.
  '1e-400',
  '-1e-400',
  '10.000000000000000001',
  '0.1000000000000000000000001',
  '999999.999999999999999999',
  '1000000.0000000000000001',
  '1e400',
];
/** Numbers no double holds exactly that a double would round into a valid price: a 400, on their text. */
const ROUNDED_PRICES = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: LIMITS.maxPrice * 100 - 1 }), fc.stringMatching(/^0{14,30}[1-9]$/))
    .map(([cents, tail]) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}${tail}`),
  fc.integer({ min: 325, max: 100_000 }).map((exponent) => `1e-${exponent}`),
);

const badNumbers = (context: FuzzContext) =>
  fc.oneof(
    withBody(
      'bad-numbers',
      context,
      fc.oneof(
        fc.tuple(validBody, fc.constantFrom(...RAW_NUMBERS)).map(([body, raw]) => withRawField(body, 'price', raw)),
        fc.tuple(validBody, fc.double()).map(([body, price]) => withRawField(body, 'price', String(price))),
        fc
          .tuple(validBody, fc.integer({ min: -100_000_000, max: 200_000_000 }), fc.integer({ min: 1, max: 1000 }))
          .map(([body, numerator, divisor]) => withRawField(body, 'price', String(numerator / divisor))),
      ),
    ),
    // Judged on the text sent, never on the double it rounds to: always a 400.
    withBody(
      'bad-numbers',
      context,
      fc.tuple(validBody, ROUNDED_PRICES).map(([body, raw]) => withRawField(body, 'price', raw)),
    ).map((fuzz) => ({ ...fuzz, expectedStatus: 400 })),
  );

// Invalid dates only; a valid one can only come out in the fuzz year.
const badDateString = fc.oneof(
  fc.constantFrom(
    `${YEAR}-02-29`,
    `${YEAR}-13-01`,
    `${YEAR}-00-10`,
    `${YEAR}-01-00`,
    `${YEAR}-01-32`,
    `${YEAR}-04-31`,
    '0000-01-01',
    '1899-12-31',
    '10000-01-01',
    `${YEAR}-1-1`,
    `${YEAR}/01/01`,
    `${YEAR}-01-01T00:00:00Z`,
    ` ${YEAR}-01-01`,
    `${YEAR}-01-01 `,
    '',
    `${YEAR}-01-01\u0000`,
    '９９９０-01-01',
    `+0${YEAR}-01-01`,
    '-0001-01-01',
    'today',
    `${YEAR}-W01-1`,
    `${YEAR}-001`,
  ),
  fc
    .tuple(fc.constantFrom(YEAR, 0, 1899, 10_000, 99_999), fc.integer({ min: -1, max: 13 }), fc.integer({ min: -1, max: 32 }))
    .map(([year, month, day]) => `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`),
);

const badDates = (context: FuzzContext) =>
  withBody(
    'bad-dates',
    context,
    fc.oneof(
      fc
        .tuple(validBody, fc.array(fc.oneof(badDateString, fuzzDate), { minLength: 1, maxLength: 5 }))
        .map(([body, dates]) => JSON.stringify({ ...body, dates })),
      fc
        .tuple(validBody, fc.oneof(fc.jsonValue({ maxDepth: 2 }), badDateString, fc.constant([]), fc.constant([[`${YEAR}-01-01`]])))
        .map(([body, dates]) => JSON.stringify({ ...body, dates })),
      // Too many dates: over the limit, repeated or distinct.
      fc
        .tuple(validBody, fc.integer({ min: LIMITS.maxDates + 1, max: 400 }), fc.boolean())
        .map(([body, count, repeated]) =>
          JSON.stringify({ ...body, dates: Array.from({ length: count }, (_, i) => dayOfYear(YEAR, repeated ? 0 : i % 365)) }),
        ),
    ),
  );

const RANDOM_UUID_LIKE = [
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '00000000-0000-0000-0000-000000000000',
  '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90',
];

function badIdSegment(context: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      'not-a-uuid',
      '0',
      context.targetId.replace(/-/g, ''),
      `${context.targetId}x`,
      context.targetId.toUpperCase(),
      `%20${context.targetId}`,
      `${context.targetId}%00`,
      '%ZZ',
      '%',
      '%00',
      '%2F',
      '..',
      '.',
      '%2e%2e',
      `%E2%80%AE${context.targetId}`,
      'a'.repeat(2_000),
      encodeURIComponent("' OR '1'='1"),
      '%7BeventId%7D',
      'null',
      'undefined',
      '__proto__',
      'constructor',
      encodeURIComponent(context.targetId.replace('-', '\u2010')),
      ...RANDOM_UUID_LIKE,
    ),
    fc.uuid().map((uuid) => uuid.toUpperCase()),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  );
}

const badIds = (context: FuzzContext) =>
  fc.tuple(fc.constantFrom('GET', 'PATCH', 'DELETE'), badIdSegment(context), validBody).map(([method, id, body]): FuzzRequest => ({
    category: 'bad-ids',
    method,
    path: `/special-events/${id}`,
    // A DELETE that reached the target must not remove it: its If-Match never matches.
    headers: method === 'DELETE' ? [['If-Match', '"999999999"']] : method === 'PATCH' ? [JSON_TYPE] : [],
    ...(method === 'PATCH' ? { body: JSON.stringify({ price: body.price }) } : {}),
  }));

const queryValue = fc.oneof(
  fuzzDate,
  badDateString,
  fc.constantFrom(...RAW_NUMBERS, '0', '1', '30', '31', '100', '101', '-1', '1.5', '1e1', 'abc', '', ' ', '999999', '9999999999999'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const QUERY_NAMES = [
  'startDate',
  'endDate',
  'page',
  'limit',
  'Limit',
  'PAGE',
  'foo',
  'start_date',
  '',
  'limit[]',
  '__proto__',
  'constructor',
  'startDate ',
];

const oddQuery = () =>
  fc
    .oneof(
      fc
        .array(fc.tuple(fc.constantFrom(...QUERY_NAMES), queryValue), { maxLength: 5 })
        .map((pairs) => pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')),
      fc.constantFrom(
        'limit=30&limit=30',
        'page=1&page=2',
        'startDate=9990-01-01&startDate=9990-01-02',
        '%',
        '%zz=1',
        'limit=%',
        '&&&',
        '=',
        '==',
        'limit',
        'limit=1=2',
        'limit=+1',
        'limit=%2B1',
        'limit=%00',
        'startDate=9990-01-10&endDate=9990-01-01',
        'startDate=9990-01-01&endDate=9991-01-03',
        `startDate=1900-01-01&endDate=9999-12-31`,
        `q=${'x'.repeat(6_000)}`,
        'a=1&'.repeat(500),
      ),
    )
    .map((query): FuzzRequest => ({ category: 'odd-query', method: 'GET', path: `/special-events?${query}`, headers: [] }));

const wrongMethodOrPath = (context: FuzzContext) =>
  fc
    .tuple(
      fc.constantFrom(
        'PUT',
        'HEAD',
        'OPTIONS',
        'TRACE',
        'COPY',
        'PURGE',
        'LINK',
        'SEARCH',
        'PROPFIND',
        'QUERY',
        'GET',
        'POST',
        'PATCH',
        'DELETE',
      ),
      fc.constantFrom(
        '/special-events',
        `/special-events/${context.targetId}`,
        '/special-events/',
        `/special-events/${context.targetId}/`,
        `/special-events/${context.targetId}/tickets`,
        '/special-events//',
        '/SPECIAL-EVENTS',
        '/special-events%2F',
        '/special-events;x=1',
        '',
        '/',
        '/tickets',
        '/../special-events',
        '/special-events/..',
        '/special-events#fragment',
      ),
    )
    .filter(([method, path]) => {
      // Leave out the documented operations themselves.
      // (`''` is the base URL itself: GET there is the service index.)
      const documented: Record<string, string[]> = {
        '/special-events': ['GET', 'POST'],
        [`/special-events/${context.targetId}`]: ['GET', 'PATCH'],
        '': ['GET'],
      };
      // Compared as API Gateway matches them: `DELETE /special-events/<target>/` would delete the
      // target the other requests aim at.
      const resource = matchedResourcePath(path);
      return !(documented[resource] ?? []).includes(method) && !(method === 'DELETE' && resource === `/special-events/${context.targetId}`);
    })
    .map(([method, path]): FuzzRequest => ({ category: 'wrong-method-or-path', method, path, headers: [] }));

const CONTENT_TYPES = [
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'application/jsonx',
  'application/json, text/plain',
  '',
  '*/*',
  'application/*',
  'json',
  'application/json; charset=UTF-8',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'application/json;;;',
  'application/json; charset=',
  'application/json; charset="utf-8"',
  'application/problem+json',
  'text/json',
  'application/vnd.api+json',
  'application/json; charset=utf-8; charset=latin1',
  'application/json; charset=utf-8; CHARSET=utf-8',
];

const wrongContentType = (context: FuzzContext) =>
  fc
    .tuple(writeRoute(context), validBody, fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }), fc.boolean())
    .map(([[method, path], body, contentType, twice]): FuzzRequest => ({
      category: 'wrong-content-type',
      method,
      path,
      headers: contentType === undefined ? [] : twice ? [['Content-Type', contentType], JSON_TYPE] : [['Content-Type', contentType]],
      body: method === 'PATCH' ? JSON.stringify({ price: body.price }) : JSON.stringify(body),
      // Content-Type is a singleton field: two lines, or a parameter given twice, leave the media type undetermined (400).
      ...(contentType !== undefined && (twice || /charset=.*charset=/i.test(contentType)) ? { expectedStatus: 400 } : {}),
    }));

const oversizedBody = (context: FuzzContext) =>
  withBody(
    'oversized-body',
    context,
    fc.oneof(
      fc.tuple(validBody, fc.integer({ min: LIMITS.maxBodyBytes - 200, max: LIMITS.maxBodyBytes + 200 })).map(([body, size]) => {
        const text = JSON.stringify({ ...body, eventDescription: '' });
        return JSON.stringify({ ...body, eventDescription: 'd'.repeat(Math.max(0, size - text.length)) });
      }),
      fc.constantFrom(200 * 1024, 1024 * 1024).map((size) => `{"eventDescription":"${'d'.repeat(size)}"}`),
      fc
        .integer({ min: 1_000, max: 6_000 })
        .map((count) => JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i])))),
    ),
  );

/** Authorization values that are refused without any credential check (they are not Basic credentials). */
function malformedAuthorization(context: FuzzContext): fc.Arbitrary<string> {
  const editor = context.editorAuthorization.slice('Basic '.length);
  return fc.oneof(
    fc.constantFrom(
      'Basic',
      'Basic ',
      'Basic ====',
      `Basic ${b64('admin')}`,
      'Bearer eyJhbGciOiJub25lIn0.e30.',
      'Digest username="admin", realm="museum"',
      `Basic ${b64(':a-password')}`,
      `Basic ${b64('admin:')}`,
      `Basic ${b64('ad min:password')}`,
      `Basic ${b64('admin\u0000:password')}`,
      `Basic ${b64(Buffer.from([0xff, 0x3a, 0x41]))}`,
      `Basic ${'A'.repeat(6_000)}`,
      `Basic ${editor.slice(0, -1)}`,
      `Basic ${editor}=`,
      `Basic ${editor} extra`,
      `Basic\t${editor}`,
      `Basic  ${editor}`,
      'Basic ñññ',
      `Basic ${b64(`admin:${'x'.repeat(1_025)}`)}`,
      `Basic ${b64(`${'u'.repeat(65)}:password`)}`,
      `Basic ${editor.replace(/\+/g, '-').replace(/\//g, '_')}A`,
      `Token ${editor}`,
      editor,
      `Basic ${b64('admin:password')}${b64('x')}`,
    ),
    fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((value) => headerSafe(`Basic ${value}`)),
  );
}

/** Well-formed Basic credentials that are wrong: each one is a check of the authorizer (one read, one keyed hash). */
const wrongCredentials = fc.oneof(
  fc.nat().map((n) => `Basic ${b64(`admin:wrong-password-${n}`)}`),
  fc.nat().map((n) => `Basic ${b64(`nobody-${n}:some-password`)}`),
);

const brokenAuthorization = (context: FuzzContext) =>
  fc
    .tuple(
      fc.constantFrom<['GET' | 'POST' | 'PATCH' | 'DELETE', string]>(
        ['GET', '/special-events'],
        ['POST', '/special-events'],
        ['GET', `/special-events/${context.targetId}`],
        ['PATCH', `/special-events/${context.targetId}`],
        ['DELETE', `/special-events/${context.targetId}`],
      ),
      fc.oneof(
        { weight: 6, arbitrary: malformedAuthorization(context).map((value) => [value]) },
        { weight: 1, arbitrary: wrongCredentials.map((value) => [value]) },
        // Repeated headers: the last one counts, for the cache as for the authorizer.
        {
          weight: 2,
          arbitrary: fc.shuffledSubarray([context.viewerAuthorization, context.editorAuthorization, 'Basic ', 'Bearer x'], {
            minLength: 2,
          }),
        },
        { weight: 1, arbitrary: fc.constant([]) },
      ),
      validBody,
    )
    .map(([[method, path], values, body]): FuzzRequest => ({
      category: 'broken-authorization',
      method,
      path,
      headers: [
        ...values.map((value): [string, string] => ['Authorization', value]),
        ...(method === 'DELETE' ? [['If-Match', '"999999999"'] as [string, string]] : []),
        ...(method === 'POST' || method === 'PATCH' ? [JSON_TYPE] : []),
      ],
      anonymous: values.length === 0,
      ...(method === 'POST' ? { body: JSON.stringify(body) } : method === 'PATCH' ? { body: JSON.stringify({ price: body.price }) } : {}),
    }));

const IF_MATCH = [
  '"0"',
  '"999999999"',
  'W/"1"',
  'garbage',
  '"999999998", "999999999"',
  '""',
  '"-1"',
  '"1.0"',
  '"99999999999999999999"',
  ',',
  '"0",',
  'W/',
  '*, "1"',
];

const oddHeaders = (context: FuzzContext) =>
  fc.oneof(
    fc.tuple(fc.constantFrom('PATCH', 'DELETE'), fc.constantFrom(...IF_MATCH), validBody).map(([method, ifMatch, body]): FuzzRequest => ({
      category: 'odd-headers',
      method,
      path: `/special-events/${context.targetId}`,
      headers: method === 'PATCH' ? [['If-Match', ifMatch], JSON_TYPE] : [['If-Match', ifMatch]],
      ...(method === 'PATCH' ? { body: JSON.stringify({ price: body.price }) } : {}),
    })),
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom('', ' ', 'k'.repeat(256), 'ñ', 'a,b'),
          fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 300 }).map(headerSafe),
          fc.nat({ max: 20 }).map((n) => `fuzz-key-${n}`),
        ),
        validBody,
        fc.boolean(),
      )
      .map(([key, body, asViewer]): FuzzRequest => ({
        category: 'odd-headers',
        method: 'POST',
        path: '/special-events',
        headers: [['Idempotency-Key', key], JSON_TYPE],
        body: JSON.stringify(body),
        ...(asViewer ? { as: 'viewer' as const } : {}),
      })),
    fc
      .tuple(
        fc.constantFrom<[string, string]>(
          ['X-HTTP-Method-Override', 'DELETE'],
          ['Content-Encoding', 'gzip'],
          ['Accept', 'application/xml'],
          ['Accept-Charset', 'utf-16'],
          ['Origin', 'https://evil.example'],
          ['X-Forwarded-For', '127.0.0.1, 10.0.0.1'],
          ['Host', 'evil.example'],
          ['Expect', '100-continue'],
          ['Range', 'bytes=0-10'],
          ['If-None-Match', '*'],
          ['X-Amzn-Trace-Id', 'Root=1-00000000-000000000000000000000000'],
          ['Cookie', 'session=1'],
        ),
        fc.constantFrom<['GET' | 'DELETE', string]>(
          ['GET', '/special-events'],
          ['GET', `/special-events/${context.targetId}`],
          ['DELETE', `/special-events/${context.targetId}`],
        ),
      )
      .map(([header, [method, path]]): FuzzRequest => ({
        category: 'odd-headers',
        method,
        path,
        headers: method === 'DELETE' ? [header, ['If-Match', '"999999999"']] : [header],
      })),
  );

// Start and end dates near the ends of the supported calendar (1900-01-01, 9999-12-31) and just
// past them, given or left to their defaults. Lists store nothing, so any date may be used.
const edgeDate = fc.oneof(
  fc.integer({ min: 0, max: 400 }).map((day) => new Date(Date.UTC(9999, 11, 31 - day)).toISOString().slice(0, 10)),
  fc.integer({ min: 0, max: 400 }).map((day) => new Date(Date.UTC(1900, 0, 1 + day)).toISOString().slice(0, 10)),
  fc.constantFrom('10000-01-01', '9999-12-32', '9999-13-01', '+010000-01-01', '1899-12-31', '1900-00-01', '275760-09-13', '0000-01-01'),
);

const calendarEnd = () =>
  fc
    .tuple(
      fc.option(edgeDate, { nil: undefined }),
      fc.option(edgeDate, { nil: undefined }),
      fc.option(fc.constantFrom('1', '2', '100', '1000000'), { nil: undefined }),
    )
    .map(([startDate, endDate, page]): FuzzRequest => {
      const query = [startDate && `startDate=${startDate}`, endDate && `endDate=${endDate}`, page && `page=${page}`]
        .filter(Boolean)
        .join('&');
      return { category: 'calendar-end', method: 'GET', path: `/special-events${query ? `?${query}` : ''}`, headers: [] };
    });

// If-Match values: lists, commas inside opaque tags, weak tags, empty fields, near misses of the
// target's version ("01"), several field lines. A DELETE's values never match (the target must live).
const NEVER_MATCHING_IF_MATCH = [
  '',
  ' ',
  ',',
  ', ,',
  'W/"1"',
  'W/"2", W/"3"',
  '"01"',
  '"0000001"',
  '"1.0"',
  '"x,y"',
  '"x,y", "z"',
  '""',
  '"999999999", "999999998"',
  '"-1"',
  '"\u00e9"',
];
// The last two are long runs that make a backtracking list pattern take hours (ReDoS).
const INVALID_IF_MATCH = [
  '1',
  'garbage',
  '*, "1"',
  '"1" "2"',
  'W/',
  'w/"1"',
  '"1',
  '1"',
  '**',
  '"a"b"',
  '"1";q=1',
  `${', '.repeat(2000)}x`,
  `"1"${' ,'.repeat(2000)} x`,
];

/** Every route a precondition header can be sent to, with the body its method needs; nothing here may delete the target. */
const preconditionRoute = (context: FuzzContext, body: { price: number }) =>
  fc.constantFrom<[string, string, string | undefined]>(
    ['GET', `/special-events/${context.targetId}`, undefined],
    ['HEAD', `/special-events/${context.targetId}`, undefined],
    ['GET', `/special-events?startDate=${YEAR}-01-01&endDate=${YEAR}-01-02`, undefined],
    ['PATCH', `/special-events/${context.targetId}`, JSON.stringify({ price: body.price })],
    ['DELETE', `/special-events/${context.targetId}`, undefined],
    ['POST', '/special-events', undefined],
  );

const preconditions = (context: FuzzContext) =>
  fc.oneof(
    fc
      .tuple(
        fc.array(
          fc.oneof(
            fc.constantFrom(...NEVER_MATCHING_IF_MATCH, ...INVALID_IF_MATCH),
            fc.nat({ max: 50 }).map((n) => `"${n}"`),
            fc.constant('*'),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        fc.boolean(),
        validBody,
      )
      .map(([values, oneLine, body]): FuzzRequest => ({
        category: 'preconditions',
        method: 'PATCH',
        path: `/special-events/${context.targetId}`,
        headers: [
          ...(oneLine
            ? [['If-Match', values.join(', ')] as [string, string]]
            : values.map((value): [string, string] => ['If-Match', value])),
          JSON_TYPE,
        ],
        body: JSON.stringify({ price: body.price }),
      })),
    fc
      .array(fc.constantFrom(...NEVER_MATCHING_IF_MATCH, ...INVALID_IF_MATCH), { minLength: 1, maxLength: 3 })
      .map((values): FuzzRequest => ({
        category: 'preconditions',
        method: 'DELETE',
        path: `/special-events/${context.targetId}`,
        headers: values.map((value): [string, string] => ['If-Match', value]),
      })),
    // A value outside the grammar of If-Match or If-None-Match is a 400 on every method (RFC 9110 §13.1).
    fc.tuple(fc.constantFrom('If-Match', 'If-None-Match'), fc.constantFrom(...INVALID_IF_MATCH), validBody).chain(([header, value, body]) =>
      preconditionRoute(context, body).map(([method, path, text]): FuzzRequest => ({
        category: 'preconditions',
        method,
        path,
        headers: [[header, value], ...(method === 'POST' || method === 'PATCH' ? [JSON_TYPE] : [])],
        body: method === 'POST' ? JSON.stringify(body) : text,
        expectedStatus: 400,
      })),
    ),
    // If-None-Match: * fails on every write, the target and the collection exist (RFC 9110 §13.1.2): 412, nothing written;
    // an If-Match that matches nothing is evaluated first, with the same answer.
    fc
      .tuple(
        fc.option(fc.constantFrom(...NEVER_MATCHING_IF_MATCH), { nil: undefined }),
        validBody,
        fc.constantFrom('PATCH', 'DELETE', 'POST'),
      )
      .map(([ifMatch, body, method]): FuzzRequest => ({
        category: 'preconditions',
        method,
        path: method === 'POST' ? '/special-events' : `/special-events/${context.targetId}`,
        headers: [
          ['If-None-Match', '*'],
          ...(ifMatch === undefined ? [] : [['If-Match', ifMatch] as [string, string]]),
          ...(method === 'DELETE' ? [] : [JSON_TYPE]),
        ],
        ...(method === 'DELETE' ? {} : { body: method === 'POST' ? JSON.stringify(body) : JSON.stringify({ price: body.price }) }),
        expectedStatus: 412,
      })),
  );

/** Byte sequences that are not UTF-8, each one of a kind the fatal decoder refuses. */
const NOT_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0xa6],
];

const byteLevelBodies = (context: FuzzContext) =>
  fc.oneof(
    withBody(
      'byte-level-bodies',
      context,
      fc.oneof(
        // Bad bytes inside one text field of a valid body.
        fc
          .tuple(validBody, fc.constantFrom('name', 'location', 'eventDescription'), fc.constantFrom(...NOT_UTF8), fc.nat({ max: 8 }))
          .map(([body, field, bytes, at]) => {
            const text = JSON.stringify({ ...body, [field]: 'x'.repeat(8) });
            const marker = text.indexOf('x'.repeat(8)) + at;
            return Buffer.concat([Buffer.from(text.slice(0, marker)), Buffer.from(bytes), Buffer.from(text.slice(marker))]);
          }),
        // U+FFFD sent as UTF-8 or escaped; a BOM; UTF-16 and Latin-1 encodings of a valid body.
        fc.tuple(validBody, fc.constantFrom('a\ufffdb', '\ufffd')).map(([body, name]) => JSON.stringify({ ...body, name })),
        validBody.map((body) => JSON.stringify({ ...body, name: 'x' }).replace('"x"', '"a\\ufffdb"')),
        validBody.map((body) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(body))])),
        validBody.map((body) => Buffer.from(JSON.stringify({ ...body, name: 'Caf\u00e9' }), 'utf16le')),
        validBody.map((body) => Buffer.from(JSON.stringify({ ...body, name: 'Caf\u00e9' }), 'latin1')),
        // Keys given twice, or named "".
        fc
          .tuple(validBody, fc.constantFrom('name', 'price', 'dates', 'location', ''))
          .map(([body, key]) => `{${JSON.stringify(key)}:${JSON.stringify((body as Body)[key] ?? 1)},${JSON.stringify(body).slice(1)}`),
      ),
    ),
    // Content codings: a real gzip body, or a label on plain JSON.
    fc
      .tuple(
        writeRoute(context),
        validBody,
        fc.constantFrom('gzip', 'br', 'deflate', 'x-gzip', 'GZIP', 'identity, gzip', 'compress'),
        fc.boolean(),
      )
      .map(([[method, path], body, coding, compressed]): FuzzRequest => {
        const text = method === 'PATCH' ? JSON.stringify({ price: body.price }) : JSON.stringify(body);
        return {
          category: 'byte-level-bodies',
          method,
          path,
          headers: [JSON_TYPE, ['Content-Encoding', coding]],
          body: compressed ? gzipSync(text) : text,
        };
      }),
  );

// Text that looks empty or hides something: default-ignorable and white-space characters only,
// bidirectional controls, tag characters, emoji sequences with ZWJ (valid), in every text field.
const INVISIBLE = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\u2061',
  '\u2064',
  '\ufeff',
  '\u00ad',
  '\u034f',
  '\u115f',
  '\u1160',
  '\u17b4',
  '\u180e',
  '\u3164',
  '\uffa0',
  '\ufe0f',
  '\ufe00',
  '\u{e0001}',
  '\u{e0020}',
  '\u{e007f}',
  '\u{1d173}',
  '\u{1bca0}',
  '\u{e0100}',
  ' ',
  '\u00a0',
  '\u3000',
  '\u2007',
  '\u202f',
];
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];

const invisibleText = (context: FuzzContext) =>
  withBody(
    'invisible-text',
    context,
    fc
      .tuple(
        validBody,
        fc.constantFrom('name', 'location', 'eventDescription'),
        fc.oneof(
          fc.string({ unit: fc.constantFrom(...INVISIBLE), minLength: 1, maxLength: 12 }),
          fc
            .tuple(
              fc.string({ unit: fc.constantFrom(...INVISIBLE), maxLength: 3 }),
              fc.constantFrom(...BIDI),
              fc.constantFrom('', 'abc', 'evil'),
            )
            .map(([pad, bidi, text]) => `${pad}${text}${bidi}txt`),
          fc.constantFrom(
            '👨\u200d👩\u200d👧',
            '\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}',
            'a\u200db',
            '\u200bName\u200b',
            'e\u0301',
            '\u{e0041}\u{e0042}\u{e0043}',
            '\u2028',
            'x\u2029y',
          ),
        ),
      )
      .map(([body, field, text]) => JSON.stringify({ ...body, [field]: text })),
  );

/** One bad request of any category, for the given run context. */
export function badRequest(context: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    malformedJson(context),
    wrongTypes(context),
    hugeAndUnicodeStrings(context),
    badNumbers(context),
    badDates(context),
    badIds(context),
    oddQuery(),
    wrongMethodOrPath(context),
    wrongContentType(context),
    oversizedBody(context),
    brokenAuthorization(context),
    oddHeaders(context),
    calendarEnd(),
    preconditions(context),
    byteLevelBodies(context),
    invisibleText(context),
  );
}
