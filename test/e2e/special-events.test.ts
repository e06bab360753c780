// The five special-event operations over real HTTP against the local API (npm start), as a client sees them.
import { api, createEvent, sampleEvent, type SpecialEventBody } from '../support/api-client.ts';
import { addDays } from '../../functions/events/calendar-dates.ts';

/* eslint-disable @typescript-eslint/no-unsafe-assignment -- jest's asymmetric matchers are typed any */
const problemFields = {
  type: expect.stringMatching(/^https:\/\//),
  title: expect.any(String),
  status: expect.any(Number),
  detail: expect.any(String),
};
/* eslint-enable @typescript-eslint/no-unsafe-assignment */

describe('POST /special-events', () => {
  test('creates an event: 201, all six fields, a Location header and an ETag', async () => {
    const response = await api<SpecialEventBody>('POST', '/special-events', {
      json: { ...sampleEvent(), dates: ['2031-05-03', '2031-05-01', '2031-05-03'], name: '  Spaced  ' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      /* eslint-disable @typescript-eslint/no-unsafe-assignment -- jest's asymmetric matchers are typed any */
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      /* eslint-enable @typescript-eslint/no-unsafe-assignment */
      name: 'Spaced',
      location: 'Main Hall',
      eventDescription: sampleEvent().eventDescription,
      dates: ['2031-05-01', '2031-05-03'],
      price: 25,
    });
    expect(response.headers.get('location')).toBe(`/v1.1/special-events/${response.body.eventId}`);
    expect(response.headers.get('etag')).toBe('"1"');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  test.each([
    ['a missing field', { name: 'x', location: 'y', eventDescription: 'z', dates: ['2031-01-01'] }, 'price'],
    ['a client-sent eventId', { ...sampleEvent(), eventId: '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90' }, 'eventId'],
    ['an unknown field', { ...sampleEvent(), colour: 'red' }, 'colour'],
    ['an impossible date', { ...sampleEvent(), dates: ['2026-02-30'] }, 'dates.0'],
    ['no dates', { ...sampleEvent(), dates: [] }, 'dates'],
    ['367 dates', { ...sampleEvent(), dates: Array.from({ length: 367 }, (_, i) => addDays('2032-01-01', i)) }, 'dates'],
    ['a negative price', { ...sampleEvent(), price: -1 }, 'price'],
    ['a price with three decimals', { ...sampleEvent(), price: 1.005 }, 'price'],
    ['a price above one million', { ...sampleEvent(), price: 1_000_000.01 }, 'price'],
    ['a price sent as a string', { ...sampleEvent(), price: '25' }, 'price'],
    ['a blank name', { ...sampleEvent(), name: '   ' }, 'name'],
    ['a name of 201 characters', { ...sampleEvent(), name: 'n'.repeat(201) }, 'name'],
    ['a control character in the location', { ...sampleEvent(), location: 'Hall\u0007' }, 'location'],
    ['a description of 5001 characters', { ...sampleEvent(), eventDescription: 'd'.repeat(5001) }, 'eventDescription'],
    ['null instead of an object', null, ''],
    ['an array instead of an object', [sampleEvent()], ''],
  ])('rejects %s with 400 naming the field', async (_, body, field) => {
    const response = await api<{ errors: { field: string }[] }>('POST', '/special-events', { json: body });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ ...problemFields, status: 400 });
    expect(response.body.errors.map((e) => e.field)).toContain(field);
  });

  test('accepts the bounds: 200-character name, 366 dates (every day of 2032), price 0 and 1,000,000', async () => {
    const dates = Array.from({ length: 366 }, (_, i) => addDays('2032-01-01', i));
    for (const price of [0, 1_000_000, 19.99]) {
      const response = await api('POST', '/special-events', { json: { ...sampleEvent(), name: 'n'.repeat(200), dates, price } });
      expect(response.status).toBe(201);
    }
  });

  test('malformed JSON is a 400 problem', async () => {
    const response = await api('POST', '/special-events', { rawBody: '{"name": "x",', headers: { 'Content-Type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ ...problemFields, title: 'Malformed JSON body' });
  });

  test.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/json; charset=latin1']])(
    'a body sent as %s is a 415 problem',
    async (contentType) => {
      const response = await api('POST', '/special-events', {
        rawBody: JSON.stringify(sampleEvent()),
        headers: { 'Content-Type': contentType },
      });
      expect(response.status).toBe(415);
    },
  );

  test('a body without Content-Type is a 415 problem', async () => {
    const response = await api('POST', '/special-events', { rawBody: JSON.stringify(sampleEvent()) });
    expect(response.status).toBe(415);
  });

  test('a body over 64 KB is a 413 problem and stores nothing', async () => {
    const response = await api('POST', '/special-events', { json: { ...sampleEvent(), eventDescription: 'x'.repeat(70_000) } });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ ...problemFields, status: 413 });
  });
});

describe('GET /special-events/{eventId}', () => {
  test('returns the event with its ETag', async () => {
    const created = await createEvent();
    const response = await api<SpecialEventBody>('GET', `/special-events/${created.eventId}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(created);
    expect(response.headers.get('etag')).toBe('"1"');
  });

  test('an unknown id is a 404 problem', async () => {
    const response = await api('GET', '/special-events/6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ ...problemFields, status: 404 });
  });

  test('a malformed id is a 400 problem', async () => {
    const response = await api<{ errors: { field: string }[] }>('GET', '/special-events/not-a-uuid');
    expect(response.status).toBe(400);
    expect(response.body.errors[0]?.field).toBe('eventId');
  });
});

describe('PATCH /special-events/{eventId}', () => {
  test('changes only the fields sent and returns the whole event', async () => {
    const created = await createEvent();
    const response = await api<SpecialEventBody>('PATCH', `/special-events/${created.eventId}`, {
      json: { price: 30, dates: ['2031-06-02', '2031-06-01'] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...created, price: 30, dates: ['2031-06-01', '2031-06-02'] });
    expect(response.headers.get('etag')).toBe('"2"');
    expect((await api('GET', `/special-events/${created.eventId}`)).body).toEqual(response.body);
  });

  test('an empty object is a 400 problem', async () => {
    const created = await createEvent();
    const response = await api('PATCH', `/special-events/${created.eventId}`, { json: {} });
    expect(response.status).toBe(400);
  });

  test.each([[{ eventId: '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90' }], [{ price: null }], [{ dates: ['2031-02-29'] }], [{ name: '' }]])(
    'an invalid change %j is a 400 problem and changes nothing',
    async (changes) => {
      const created = await createEvent();
      expect((await api('PATCH', `/special-events/${created.eventId}`, { json: changes })).status).toBe(400);
      expect((await api('GET', `/special-events/${created.eventId}`)).body).toEqual(created);
    },
  );

  test('an unknown id is a 404 problem and creates nothing', async () => {
    const eventId = '0c5b2a61-4a3f-4c43-9f0a-6f1f2a3b4c5d';
    expect((await api('PATCH', `/special-events/${eventId}`, { json: { price: 1 } })).status).toBe(404);
    expect((await api('GET', `/special-events/${eventId}`)).status).toBe(404);
  });

  test('If-Match with the current ETag succeeds; a stale one is a 412 problem', async () => {
    const created = await createEvent();
    const path = `/special-events/${created.eventId}`;
    expect((await api('PATCH', path, { json: { price: 1 }, headers: { 'If-Match': '"1"' } })).status).toBe(200);
    const stale = await api('PATCH', path, { json: { price: 2 }, headers: { 'If-Match': '"1"' } });
    expect(stale.status).toBe(412);
    expect((await api<SpecialEventBody>('GET', path)).body.price).toBe(1);
  });
});

describe('DELETE /special-events/{eventId}', () => {
  test('deletes the event: 204 without a body, then 404', async () => {
    const created = await createEvent();
    const response = await api('DELETE', `/special-events/${created.eventId}`);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await api('GET', `/special-events/${created.eventId}`)).status).toBe(404);
    expect((await api('DELETE', `/special-events/${created.eventId}`)).status).toBe(404);
  });

  test('If-Match with a stale ETag is a 412 problem and keeps the event', async () => {
    const created = await createEvent();
    await api('PATCH', `/special-events/${created.eventId}`, { json: { price: 5 } });
    expect((await api('DELETE', `/special-events/${created.eventId}`, { headers: { 'If-Match': '"1"' } })).status).toBe(412);
    expect((await api('DELETE', `/special-events/${created.eventId}`, { headers: { 'If-Match': '"2"' } })).status).toBe(204);
  });
});

describe('the gateway', () => {
  test('an unknown path is a 404 problem, a method the path lacks a 405 problem with Allow', async () => {
    expect((await api('GET', '/tickets')).status).toBe(404);
    const put = await api('PUT', '/special-events');
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });
});
