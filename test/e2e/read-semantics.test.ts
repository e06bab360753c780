// GET as RFC 9110 means it, over real HTTP (local API, real handler bundles, DynamoDB Local):
// HEAD wherever GET is, If-None-Match and 304 on events, list pages and the public documents, If-Match and 412,
// the caching headers, and RFC 8288 paging links that a client can follow to the end.
import { LIMITS } from '../../functions/events/limits.ts';
import { api, createEvent, privateYear } from '../support/api-client.ts';
import { testEnvironment } from '../support/test-environment.ts';

/** The Link header as rel -> target (RFC 8288, as this API writes it: one target per rel). */
function links(header: string | null): Record<string, string> {
  return Object.fromEntries([...(header ?? '').matchAll(/<([^>]*)>; rel="([^"]+)"/g)].map((match) => [match[2], match[1]])) as Record<
    string,
    string
  >;
}

describe('HEAD', () => {
  test('of an event and of a list page: the GET status and headers (validator, caching, length), no content', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-03-03`] });
    const listPath = `/special-events?startDate=${event.dates[0]}&endDate=${event.dates[0]}`;
    for (const path of [`/special-events/${event.eventId}`, listPath]) {
      const get = await api('GET', path);
      const head = await api('HEAD', path);
      expect([head.status, head.text]).toEqual([200, '']);
      for (const name of ['etag', 'cache-control', 'vary', 'content-type', 'link'])
        expect([name, head.headers.get(name)]).toEqual([name, get.headers.get(name)]);
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
    }
  });

  test('of an unknown event is the 404 without content, of the documents their headers', async () => {
    const missing = await api('HEAD', '/special-events/5f0c6a4e-7d0e-4f6a-9a40-3c6f3c2b1a10');
    expect([missing.status, missing.text, missing.headers.get('content-type')]).toEqual([404, '', 'application/problem+json']);
    for (const path of ['', '/openapi.json', '/docs']) {
      const response = await fetch(`${testEnvironment().url}${path}`, { method: 'HEAD' });
      expect([path, response.status, await response.text()]).toEqual([path, 200, '']);
      expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    }
  });
});

describe('If-None-Match', () => {
  test('an event: 304 for its tag, weak or in a list or *, 200 once it changed; the 304 has the validator and no content', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-04-04`] });
    const path = `/special-events/${event.eventId}`;
    for (const condition of ['"1"', 'W/"1"', '"7", "1"', '*', ' "1" ']) {
      const response = await api('GET', path, { headers: { 'If-None-Match': condition } });
      expect([condition, response.status, response.text]).toEqual([condition, 304, '']);
      expect(response.headers.get('etag')).toBe('"1"');
      expect(response.headers.get('cache-control')).toBe('private, no-cache');
      expect(response.headers.get('vary')).toBe('Authorization, Origin, Accept');
    }
    expect((await api('GET', path, { headers: { 'If-None-Match': '"2"' } })).status).toBe(200);
    await api('PATCH', path, { json: { price: 3 } });
    const changed = await api('GET', path, { headers: { 'If-None-Match': '"1"' } });
    expect([changed.status, changed.headers.get('etag')]).toEqual([200, '"2"']);
    const invalid = await api('GET', path, { headers: { 'If-None-Match': 'not-a-tag' } });
    expect([invalid.status, (invalid.body as { errors: { field: string }[] }).errors[0]?.field]).toEqual([400, 'If-None-Match']);
  });

  test('a list page: its tag is a hash of its exact content, 304 while nothing changed, 200 with a new tag once it did', async () => {
    const date = `${privateYear()}-05-05`;
    await createEvent({ dates: [date], name: 'First' });
    const path = `/special-events?startDate=${date}&endDate=${date}`;
    const first = await api('GET', path);
    expect(first.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect((await api('GET', path)).headers.get('etag')).toBe(first.headers.get('etag'));
    const unchanged = await api('GET', path, { headers: { 'If-None-Match': first.headers.get('etag') ?? '' } });
    expect([unchanged.status, unchanged.text]).toEqual([304, '']);
    await createEvent({ dates: [date], name: 'Second' });
    const changed = await api('GET', path, { headers: { 'If-None-Match': first.headers.get('etag') ?? '' } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(first.headers.get('etag'));
  });

  test('the public documents: 304 for their tag, without credentials', async () => {
    for (const path of ['', '/openapi.json', '/docs']) {
      const first = await fetch(`${testEnvironment().url}${path}`);
      await first.arrayBuffer();
      const again = await fetch(`${testEnvironment().url}${path}`, { headers: { 'If-None-Match': first.headers.get('etag') ?? '' } });
      expect([path, again.status, await again.text(), again.headers.get('etag')]).toEqual([path, 304, '', first.headers.get('etag')]);
    }
  });
});

describe('If-Match on GET and HEAD (RFC 9110 §13.1.1)', () => {
  test('an event and a list page: 412 with the current ETag when no listed strong tag is current, the 200 when one is or it is *', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-07-07`] });
    const listPath = `/special-events?startDate=${event.dates[0]}&endDate=${event.dates[0]}`;
    for (const path of [`/special-events/${event.eventId}`, listPath]) {
      const current = (await api('GET', path)).headers.get('etag') ?? '';
      for (const method of ['GET', 'HEAD']) {
        for (const condition of ['"2"', `W/${current}`, '', '"9007199254740993"']) {
          const failed = await api(method, path, { headers: { 'If-Match': condition } });
          expect([method, path, condition, failed.status, failed.headers.get('etag')]).toEqual([method, path, condition, 412, current]);
          expect(failed.headers.get('content-type')).toBe('application/problem+json');
          expect(failed.text === '').toBe(method === 'HEAD');
        }
        for (const condition of [current, `"2", ${current}`, '*']) {
          expect([method, path, condition, (await api(method, path, { headers: { 'If-Match': condition } })).status]).toEqual([
            method,
            path,
            condition,
            200,
          ]);
        }
      }
    }
  });

  test('If-Match is evaluated before If-None-Match: a failing If-Match is a 412 even where If-None-Match would be a 304', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-07-08`] });
    const path = `/special-events/${event.eventId}`;
    expect((await api('GET', path, { headers: { 'If-Match': '"2"', 'If-None-Match': '"1"' } })).status).toBe(412);
    expect((await api('GET', path, { headers: { 'If-Match': '"1"', 'If-None-Match': '"1"' } })).status).toBe(304);
    expect((await api('GET', path, { headers: { 'If-Match': '"1"', 'If-None-Match': '"2"' } })).status).toBe(200);
  });

  test('a malformed If-Match is a 400 on a read too, and an unknown event stays a 404 whatever If-Match says', async () => {
    const event = await createEvent({ dates: [`${privateYear()}-07-09`] });
    for (const path of [`/special-events/${event.eventId}`, '/special-events']) {
      const invalid = await api('GET', path, { headers: { 'If-Match': 'not-a-tag' } });
      expect([path, invalid.status, (invalid.body as { errors: { field: string }[] }).errors[0]?.field]).toEqual([path, 400, 'If-Match']);
    }
    expect((await api('GET', '/special-events/5f0c6a4e-7d0e-4f6a-9a40-3c6f3c2b1a10', { headers: { 'If-Match': '"1"' } })).status).toBe(404);
  });
});

describe('paging links (RFC 8288)', () => {
  test('first always, prev after page 1, next exactly when an event follows; following next visits every event once', async () => {
    const date = `${privateYear()}-06-06`;
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createEvent({ dates: [date], name: `Event ${i}` }));
    const base = `/special-events?startDate=${date}&endDate=${date}&limit=2`;
    const seen: string[] = [];
    const rels: string[][] = [];
    let path: string | undefined = `${base}&page=1`;
    while (path) {
      const page = await api<{ eventId: string }[]>('GET', path);
      seen.push(...page.body.map((event) => event.eventId));
      const pageLinks = links(page.headers.get('link'));
      rels.push(Object.keys(pageLinks));
      expect(pageLinks.first).toBe(`?startDate=${date}&endDate=${date}&page=1&limit=2`);
      // Query-only references resolve against the request's own path.
      path = pageLinks.next ? `/special-events${pageLinks.next}` : undefined;
    }
    expect(rels).toEqual([
      ['first', 'next'],
      ['first', 'prev', 'next'],
      ['first', 'prev'],
    ]);
    expect(seen.sort()).toEqual(created.map((event) => event.eventId).sort());
    // A last page that is exactly full has no next: the look-ahead event says so.
    const full = await api('GET', `/special-events?startDate=${date}&endDate=${date}&limit=5`);
    expect(Object.keys(links(full.headers.get('link')))).toEqual(['first']);
  });

  test('the default window is written out in the links, and the page cap ends next', async () => {
    const response = await api('GET', `/special-events?startDate=2031-01-01&page=${LIMITS.maxListPage}&limit=1`);
    expect(links(response.headers.get('link'))).toEqual({
      first: '?startDate=2031-01-01&endDate=2031-01-08&page=1&limit=1',
      prev: `?startDate=2031-01-01&endDate=2031-01-08&page=${LIMITS.maxListPage - 1}&limit=1`,
    });
  });
});
