// The edge classes over real HTTP (local API, real handler bundles, DynamoDB Local):
// the end of the calendar, If-Match by RFC 9110, bodies that are not UTF-8, invisible text,
// content codings, duplicate keys and unknown query parameters.
import { request } from 'node:http';
import { LIMITS } from '../../functions/events/limits.ts';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { FIRST_DATE, LAST_DATE } from '../../functions/events/calendar-dates.ts';
import { api, createEvent, type SpecialEventBody } from '../support/api-client.ts';
import { RESERVED_YEARS } from '../reliability/reserved-years.ts';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';
import { basicAuthorization } from '../support/api-client.ts';

const scratchDate = `${RESERVED_YEARS.scratch}-03-03`;
const anyDate = fc
  .date({ min: new Date(`${FIRST_DATE}T00:00:00Z`), max: new Date(`${LAST_DATE}T23:59:59Z`), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10));
const nearTheEnds = fc.oneof(
  fc.integer({ min: 0, max: 400 }).map((day) => new Date(Date.UTC(9999, 11, 31 - day)).toISOString().slice(0, 10)),
  fc.integer({ min: 0, max: 400 }).map((day) => new Date(Date.UTC(1900, 0, 1 + day)).toISOString().slice(0, 10)),
);

describe('the list at the ends of the calendar', () => {
  test('startDate 9999-12-25 without endDate lists up to 9999-12-31', async () => {
    for (const startDate of ['9999-12-25', '9999-12-31', '9999-12-24']) {
      const response = await api('GET', `/special-events?startDate=${startDate}`);
      expect([startDate, response.status]).toEqual([startDate, 200]);
    }
  });

  test('over the whole calendar, with endDate given or defaulted, the list answers 200 or 400, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(anyDate, nearTheEnds),
        fc.option(fc.oneof(anyDate, nearTheEnds)),
        fc.option(fc.integer({ min: 1, max: 100 })),
        async (startDate, endDate, page) => {
          const query = [
            `startDate=${startDate}`,
            ...(endDate === null ? [] : [`endDate=${endDate}`]),
            ...(page === null ? [] : [`page=${page}`]),
          ].join('&');
          const response = await api('GET', `/special-events?${query}`);
          expect([query, response.status === 200 || response.status === 400]).toEqual([query, true]);
        },
      ),
      { numRuns: 150, seed: 20_261_123 },
    );
    // Without startDate, today is the start (the unit property covers every "today" of the calendar).
    expect((await api('GET', '/special-events')).status).toBe(200);
    expect((await api('GET', `/special-events?endDate=${LAST_DATE}`)).status).toBe(400);
  });
});

describe('If-Match (RFC 9110 §13.1.1)', () => {
  let event: SpecialEventBody;
  const patch = (ifMatch: string, price = 7) =>
    api<SpecialEventBody>('PATCH', `/special-events/${event.eventId}`, { json: { price }, headers: { 'If-Match': ifMatch } });

  beforeEach(async () => {
    event = await createEvent({ dates: [scratchDate] });
  });

  test.each(['', '"01"', '"0000001"', 'W/"1"', '"x,y"', '"2", "3"', ',', '"1.0"'])(
    'If-Match: %j matches nothing: 412, nothing written',
    async (value) => {
      expect((await patch(value)).status).toBe(412);
      expect((await api<SpecialEventBody>('GET', `/special-events/${event.eventId}`)).headers.get('etag')).toBe('"1"');
    },
  );

  test.each(['"1"', '"2", "1"', '"x,y", "1"', 'W/"1", "1"', '*', '"1",,'])('If-Match: %j matches version 1', async (value) => {
    const response = await patch(value);
    expect([response.status, response.headers.get('etag')]).toEqual([200, '"2"']);
  });

  test.each(['1', 'garbage', '*, "1"', '"1" "2"', 'W/'])('If-Match: %j is not an If-Match value: 400', async (value) => {
    expect((await patch(value)).status).toBe(400);
  });

  test('DELETE follows the same rules: a list naming the current version deletes, an empty field is 412', async () => {
    expect((await api('DELETE', `/special-events/${event.eventId}`, { headers: { 'If-Match': '' } })).status).toBe(412);
    expect((await api('DELETE', `/special-events/${event.eventId}`, { headers: { 'If-Match': 'W/"1"' } })).status).toBe(412);
    expect((await api('DELETE', `/special-events/${event.eventId}`, { headers: { 'If-Match': '"5", "1"' } })).status).toBe(204);
    expect((await api('DELETE', `/special-events/${event.eventId}`, { headers: { 'If-Match': '*' } })).status).toBe(404);
  });
});

describe('If-None-Match on writes, and the precedence of RFC 9110 §13.2.2', () => {
  let event: SpecialEventBody;
  const path = () => `/special-events/${event.eventId}`;
  const version = async () => (await api('GET', path())).headers.get('etag');

  beforeEach(async () => {
    event = await createEvent({ dates: [scratchDate] });
  });

  test.each(['*', '"1"', 'W/"1"', '"7", "1"', ' * '])(
    'If-None-Match: %j fails for the existing version 1: PATCH and DELETE are 412, nothing written',
    async (condition) => {
      const patch = await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-None-Match': condition } });
      expect([patch.status, patch.headers.get('content-type')]).toEqual([412, 'application/problem+json']);
      expect((await api('DELETE', path(), { headers: { 'If-None-Match': condition } })).status).toBe(412);
      expect(await version()).toBe('"1"');
    },
  );

  test('If-None-Match naming only other versions lets the write through', async () => {
    expect((await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-None-Match': '"2", W/"3"' } })).status).toBe(200);
    expect((await api('DELETE', path(), { headers: { 'If-None-Match': '"1"' } })).status).toBe(204);
  });

  test('If-Match is evaluated first: failing, it is the 412 even when If-None-Match holds; holding, If-None-Match still decides', async () => {
    expect((await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-Match': '"5"', 'If-None-Match': '"5"' } })).status).toBe(412);
    expect((await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-Match': '"1"', 'If-None-Match': '*' } })).status).toBe(412);
    expect(await version()).toBe('"1"');
    expect((await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-Match': '"1"', 'If-None-Match': '"5"' } })).status).toBe(200);
    expect(await version()).toBe('"2"');
  });

  test('a malformed If-Match or If-None-Match is a 400 on every method, before anything is written', async () => {
    const create = { name: 'Q', location: 'L', eventDescription: 'D', dates: [scratchDate], price: 1 };
    for (const header of ['If-Match', 'If-None-Match']) {
      for (const value of ['garbage', '"1" "2"', '*, "1"', 'W/']) {
        for (const [method, target, json] of [
          ['GET', path(), undefined],
          ['HEAD', path(), undefined],
          ['GET', '/special-events', undefined],
          ['POST', '/special-events', create],
          ['PATCH', path(), { price: 9 }],
          ['DELETE', path(), undefined],
        ] as const) {
          const response = await api(method, target, { json, headers: { [header]: value } });
          expect([header, value, method, target, response.status]).toEqual([header, value, method, target, 400]);
          if (method !== 'HEAD') expect((response.body as { errors: { field: string }[] }).errors[0]?.field).toBe(header);
        }
      }
    }
    expect(await version()).toBe('"1"');
  });

  test('a POST targets the collection, which exists: If-None-Match: * and an If-Match list are 412 and create nothing; If-Match: * creates', async () => {
    const date = `${RESERVED_YEARS.scratch}-04-04`;
    const create = { name: 'Conditional', location: 'L', eventDescription: 'D', dates: [date], price: 1 };
    const before = (await api<unknown[]>('GET', `/special-events?startDate=${date}&endDate=${date}&limit=30`)).body.length;
    for (const headers of [{ 'If-None-Match': '*' }, { 'If-Match': '"1"' }, { 'If-Match': '' }] as Record<string, string>[]) {
      expect([headers, (await api('POST', '/special-events', { json: create, headers })).status]).toEqual([headers, 412]);
    }
    expect((await api<unknown[]>('GET', `/special-events?startDate=${date}&endDate=${date}&limit=30`)).body.length).toBe(before);
    expect((await api('POST', '/special-events', { json: create, headers: { 'If-Match': '*', 'If-None-Match': '"1"' } })).status).toBe(201);
  });

  test('a repeat of an idempotent write gets its first answer although the version it made now fails its If-None-Match', async () => {
    const headers = { 'If-None-Match': '"2"', 'Idempotency-Key': `inm-${event.eventId}` };
    const first = await api<SpecialEventBody>('PATCH', path(), { json: { price: 9 }, headers });
    expect([first.status, first.headers.get('etag')]).toEqual([200, '"2"']);
    const repeat = await api<SpecialEventBody>('PATCH', path(), { json: { price: 9 }, headers });
    expect([repeat.status, repeat.headers.get('etag'), repeat.body]).toEqual([200, '"2"', first.body]);
    // The same key with another If-None-Match is another request.
    expect((await api('PATCH', path(), { json: { price: 9 }, headers: { ...headers, 'If-None-Match': '"7"' } })).status).toBe(422);
  });

  test('entity-tags beyond safe integers never match by float rounding', async () => {
    for (const tag of ['"9007199254740993"', '"9007199254740992"', '"18014398509481985"']) {
      expect([tag, (await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-Match': tag } })).status]).toEqual([tag, 412]);
      expect([tag, (await api('PATCH', path(), { json: { price: 9 }, headers: { 'If-None-Match': tag } })).status]).toEqual([tag, 200]);
    }
  });
});

/** A POST whose Content-Type is sent as one field line per value (fetch would join them into one line). */
function postWithContentTypes(
  contentTypes: string[],
  body: string,
): Promise<{ status: number; body: { errors?: { field: string; message: string }[] } }> {
  const { username, password } = TEST_USERS.editor;
  const headers = {
    'Content-Type': contentTypes,
    Authorization: basicAuthorization(username, password),
    'Content-Length': String(Buffer.byteLength(body)),
  };
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(`${testEnvironment().url}/special-events`), { method: 'POST', headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as never }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('Content-Type and numbers as sent', () => {
  const valid = { name: 'Typed', location: 'Lab', eventDescription: 'Edges', dates: [scratchDate], price: 1 };

  test('two Content-Type lines, or one with two charsets, are a 400 naming Content-Type, and nothing is created', async () => {
    for (const lines of [
      ['application/json', 'application/json'],
      ['application/json', 'text/plain'],
      ['application/json; charset=utf-8; charset=latin1'],
    ]) {
      const response = await postWithContentTypes(lines, JSON.stringify(valid));
      expect([lines, response.status, response.body.errors?.[0]?.field]).toEqual([lines, 400, 'Content-Type']);
    }
    expect((await postWithContentTypes(['application/json; charset=utf-8'], JSON.stringify(valid))).status).toBe(201);
  });

  test.each([
    ['1e-400', 'must have at most 2 decimals'],
    ['10.000000000000000001', 'must have at most 2 decimals'],
    ['1e400', 'must be at most 1000000'],
    ['-1e-400', 'must not be negative'],
  ])('a price of %s is judged on its text: 400, price %s, nothing created or changed', async (price, message) => {
    const body = JSON.stringify(valid).replace('"price":1', `"price":${price}`);
    const created = await api('POST', '/special-events', { rawBody: body, headers: { 'Content-Type': 'application/json' } });
    expect([created.status, (created.body as { errors: unknown }).errors]).toEqual([400, [{ field: 'price', message }]]);
    const event = await createEvent({ dates: [scratchDate] });
    const patched = await api('PATCH', `/special-events/${event.eventId}`, {
      rawBody: `{"price":${price}}`,
      headers: { 'Content-Type': 'application/json' },
    });
    expect([patched.status, (patched.body as { errors: unknown }).errors]).toEqual([400, [{ field: 'price', message }]]);
    expect((await api<SpecialEventBody>('GET', `/special-events/${event.eventId}`)).body.price).toBe(event.price);
  });

  test('a price in exponent notation with at most 2 decimals is stored as the value it names', async () => {
    const body = JSON.stringify(valid).replace('"price":1', '"price":1999.000000000000000000E-2');
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      rawBody: body,
      headers: { 'Content-Type': 'application/json' },
    });
    expect([created.status, created.body.price]).toEqual([201, 19.99]);
  });
});

describe('request bodies and text', () => {
  const post = (rawBody: string | Buffer, headers: Record<string, string> = {}) =>
    api('POST', '/special-events', { rawBody, headers: { 'Content-Type': 'application/json', ...headers } });
  const valid = { name: 'Edge', location: 'Lab', eventDescription: 'Edges', dates: [scratchDate], price: 1 };

  test.each([
    ['a\\xff\\xfeb', [0x61, 0xff, 0xfe, 0x62]],
    ['overlong \\xc0\\x80', [0xc0, 0x80]],
    ['encoded surrogate \\xed\\xa0\\x80', [0xed, 0xa0, 0x80]],
  ])('a name with the bytes %s is a 400, not stored with U+FFFD', async (_, bytes) => {
    const body = Buffer.concat([
      Buffer.from('{"name":"'),
      Buffer.from(bytes),
      Buffer.from(`",${JSON.stringify(valid).slice(JSON.stringify(valid).indexOf('"location"'))}`),
    ]);
    expect((await post(body)).status).toBe(400);
  });

  test.each(['\u200b', '\u200d', '\ufeff', '\u200b\u200d\ufeff', '\u2060\u00ad', ' \u3000 '])(
    'a text field of only %j is empty: 400',
    async (text) => {
      for (const field of ['name', 'location', 'eventDescription']) {
        expect([field, (await post(JSON.stringify({ ...valid, [field]: text }))).status]).toEqual([field, 400]);
      }
    },
  );

  test.each(['\u202e', '\u2066', '\u200f'])('a text field with the bidirectional control %j is a 400', async (control) => {
    for (const field of ['name', 'location', 'eventDescription']) {
      expect([field, (await post(JSON.stringify({ ...valid, [field]: `evil${control}txt` }))).status]).toEqual([field, 400]);
    }
  });

  test('Content-Encoding: gzip is a 415 with Accept-Encoding: identity', async () => {
    // A gzip body: API Gateway decodes it (or answers its own 415), the handler refuses the coding.
    const response = await post(gzipSync(JSON.stringify(valid)), { 'Content-Encoding': 'gzip' });
    expect([response.status, response.headers.get('accept-encoding')]).toEqual([415, 'identity']);
  });

  test('a field given twice is a 400', async () => {
    const response = await post('{"name":"A","name":"B","location":"Lab","eventDescription":"x","dates":["9980-03-03"],"price":1}');
    expect(response.status).toBe(400);
  });

  test('an empty property name is named as one', async () => {
    const response = await post(JSON.stringify({ ...valid, '': 1 }));
    expect(response.status).toBe(400);
    expect(response.text).toContain('the empty name');
  });
});

describe('query parameters', () => {
  test('every operation refuses parameters it does not define, as the list does', async () => {
    const { eventId } = await createEvent({ dates: [scratchDate] });
    expect((await api('GET', `/special-events/${eventId}?expand=all`)).status).toBe(400);
    expect((await api('PATCH', `/special-events/${eventId}?dryRun=1`, { json: { price: 2 } })).status).toBe(400);
    expect((await api('DELETE', `/special-events/${eventId}?force=1`)).status).toBe(400);
    expect(
      (
        await api('POST', '/special-events?x=1', {
          json: { name: 'Q', location: 'L', eventDescription: 'D', dates: [scratchDate], price: 1 },
        })
      ).status,
    ).toBe(400);
    expect((await api('GET', '/special-events?page=1000000')).text).toContain(`must be at most ${LIMITS.maxListPage}`);
    expect((await api('GET', `/special-events/${eventId}`)).status).toBe(200);
  });
});
