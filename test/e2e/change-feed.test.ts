// The change feed over real HTTP against the local API and DynamoDB Local: what a partner pulls
// after creating, changing and deleting events, and what adds nothing to it.
import {
  endOfMoment,
  encodeCursor,
  positionTime,
  requestedWindow,
  CHANGE_FEED,
  RETENTION_MS,
} from '../../functions/changes/change-feed.ts';
import { api, apiRetrying, createEvent, sampleEvent, withIdempotencyKey, type SpecialEventBody } from '../support/api-client.ts';
import { FeedWalker, feedCursorNow, feedPage } from '../support/change-feed.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('GET /special-events/changes', () => {
  test('create, update and delete of one event are three changes in that order; the deletion has event null and the last state as previous', async () => {
    const walker = new FeedWalker(await feedCursorNow());
    const start = walker.cursor;
    const created = await createEvent({ name: 'Feed: lifecycle' });
    const updated = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${created.eventId}`, {
      json: { price: 40 },
      headers: withIdempotencyKey(),
    });
    expect(updated.status).toBe(200);
    expect((await apiRetrying('DELETE', `/special-events/${created.eventId}`, { headers: withIdempotencyKey() })).status).toBe(204);

    const changes = await walker.until([created.eventId], (found) => found.length >= 3);
    expect(changes.map((change) => [change.type, change.data.version])).toEqual([
      ['museum.special-event.created', 1],
      ['museum.special-event.updated', 2],
      ['museum.special-event.deleted', 3],
    ]);
    expect(changes.map((change) => change.data)).toEqual([
      { eventId: created.eventId, version: 1, event: created, previous: null },
      { eventId: created.eventId, version: 2, event: updated.body, previous: created },
      { eventId: created.eventId, version: 3, event: null, previous: updated.body },
    ]);
    for (const change of changes) {
      expect(change).toMatchObject({
        specversion: '1.0',
        source: '/v1.1/special-events',
        subject: created.eventId,
        datacontenttype: 'application/json',
      });
      expect(change.id).not.toContain('.');
      // Served as stored: each change is its own canonical JSON text in the page.
      expect(walker.texts.some((text) => text.includes(JSON.stringify(change)))).toBe(true);
    }
    expect(new Set(changes.map((change) => change.id)).size).toBe(3);
    expect([...changes.map((change) => change.time)].sort()).toEqual(changes.map((change) => change.time));

    // A second walk from the same cursor reads the same changes, ids and all.
    const again = await new FeedWalker(start).until([created.eventId], (found) => found.length >= 3);
    expect(again).toEqual(changes);
  });

  test('a 412 write, a refused write and a repeat with the same Idempotency-Key add nothing', async () => {
    const walker = new FeedWalker(await feedCursorNow());
    const key = withIdempotencyKey();
    const body = { ...sampleEvent(), name: 'Feed: nothing added' };
    const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', { json: body, headers: key });
    expect(created.status).toBe(201);
    const repeated = await apiRetrying<SpecialEventBody>('POST', '/special-events', { json: body, headers: key });
    expect(repeated.status).toBe(201);
    expect(repeated.body.eventId).toBe(created.body.eventId);
    const path = `/special-events/${created.body.eventId}`;
    expect((await api('PATCH', path, { json: { price: 1 }, headers: { 'If-Match': '"7"' } })).status).toBe(412);
    expect((await api('DELETE', path, { headers: { 'If-Match': '"7"' } })).status).toBe(412);
    expect((await api('PATCH', path, { json: { price: -1 } })).status).toBe(400);
    expect((await api('PATCH', path, { json: { dates: ['2031-02-30'] } })).status).toBe(400);
    // A last, real change: once it is in the feed, everything before it is too.
    const patchKey = withIdempotencyKey();
    expect((await apiRetrying('PATCH', path, { json: { price: 2 }, headers: patchKey })).status).toBe(200);
    expect((await apiRetrying('PATCH', path, { json: { price: 2 }, headers: patchKey })).status).toBe(200);

    const changes = await walker.until([created.body.eventId], (found) => found.some((change) => change.data.version === 2));
    expect(changes.map((change) => [change.type, change.data.version])).toEqual([
      ['museum.special-event.created', 1],
      ['museum.special-event.updated', 2],
    ]);
    // Nothing more turns up once the hold-back has passed.
    await new Promise((resolve) => setTimeout(resolve, CHANGE_FEED.holdBackMs));
    await walker.catchUp();
    expect(walker.changes.filter((change) => change.subject === created.body.eventId)).toHaveLength(2);
  });

  test('since=now answers no changes, caught up, a cursor and a Link to the next page', async () => {
    const page = await feedPage('?since=now&limit=5');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('application/json');
    expect(page.body.changes).toEqual([]);
    expect(page.body.caughtUp).toBe(true);
    expect(page.body.next).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(page.headers.get('link')).toBe(`<?since=${page.body.next}&limit=5>; rel="next"`);
  });

  test(`a walk from no since over a fresh table (changes only in today's partitions, ${CHANGE_FEED.retentionDays} empty days before): every empty page before the first change says more follows, and the sync rule stops exactly at the hold-back`, async () => {
    const created = await createEvent({ name: 'Feed: first walk' });
    // Served once the hold-back has passed since its commit.
    await sleep(CHANGE_FEED.holdBackMs + 1_000);
    const pages = [];
    let query = '?limit=200';
    let asked = 0;
    for (;;) {
      asked = Date.now();
      const page = await feedPage(query);
      expect(page.status).toBe(200);
      pages.push(page.body);
      // An empty page is the end of the walk, or says that more follows: its time budget ran out (a loaded
      // machine) while it crossed the empty days, which all come before today's changes.
      if (page.body.changes.length === 0 && !page.body.caughtUp) expect(pages.flatMap((p) => p.changes)).toEqual([]);
      if (page.body.caughtUp) break;
      query = `?limit=200&since=${page.body.next}`;
    }
    // The first change comes before any page says caught up.
    expect(pages.findIndex((page) => page.changes.length > 0)).toBeGreaterThanOrEqual(0);
    expect(pages.findIndex((page) => page.changes.length > 0)).toBeLessThanOrEqual(pages.findIndex((page) => page.caughtUp));
    expect(pages.flatMap((page) => page.changes).map((change) => change.subject)).toContain(created.eventId);
    // Caught up means at the hold-back boundary of the last request: no later, and no earlier.
    // The position the last cursor names, as a request now reads it (a window from there).
    const end = Date.parse(positionTime(requestedWindow(pages.at(-1)?.next ?? '', new Date()).from));
    expect(end).toBeGreaterThanOrEqual(asked - CHANGE_FEED.holdBackMs);
    expect(end).toBeLessThanOrEqual(Date.now() - CHANGE_FEED.holdBackMs);
  });

  test('a page that stops at its limit says caughtUp false; following next ends at a page that says true', async () => {
    const start = await feedCursorNow();
    const events = [];
    for (let i = 0; i < 3; i++) events.push(await createEvent({ name: `Feed: limit ${i}` }));
    await sleep(CHANGE_FEED.holdBackMs + 1_000);
    const read: string[] = [];
    for (let since = start; ;) {
      const page = await feedPage(`?since=${since}&limit=1`);
      expect(page.status).toBe(200);
      read.push(...page.body.changes.map((change) => change.subject));
      if (page.body.caughtUp) break;
      expect(page.body.changes).toHaveLength(1);
      since = page.body.next;
    }
    for (const event of events) expect(read).toContain(event.eventId);
  });

  test('without since, the walk starts at the oldest retained change, in commit order', async () => {
    const page = await feedPage('?limit=200');
    expect(page.status).toBe(200);
    const times = page.body.changes.map((change) => change.time);
    expect([...times].sort()).toEqual(times);
  });

  test.each([
    ['not a cursor', 'abc$'],
    ['base64url of something else', Buffer.from('hello').toString('base64url')],
    ['empty', ''],
  ])('a malformed cursor (%s) is a 400 naming since', async (_, since) => {
    const page = await feedPage(`?since=${encodeURIComponent(since)}`);
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toBe('application/problem+json');
    expect(page.text).toContain('since');
  });

  test('a limit outside 1..200 is a 400', async () => {
    expect((await feedPage('?since=now&limit=0')).status).toBe(400);
    expect((await feedPage('?since=now&limit=201')).status).toBe(400);
  });

  test('a cursor older than retention is a 410 cursor-expired problem', async () => {
    const expired = encodeCursor(endOfMoment(new Date(Date.now() - RETENTION_MS - 60_000)));
    const page = await feedPage(`?since=${expired}`);
    expect(page.status).toBe(410);
    expect(page.body).toMatchObject({ type: 'https://museum.example/problems/cursor-expired', status: 410 });
  });

  test('a viewer reads the feed; without credentials the answer is 401', async () => {
    expect((await feedPage('?since=now', { as: 'viewer' })).status).toBe(200);
    expect((await feedPage('?since=now', { as: 'none' })).status).toBe(401);
  });

  test('the literal path wins over an event id: PATCH /special-events/changes is a 405 with Allow, not an update', async () => {
    const answer = await api('PATCH', '/special-events/changes', { json: { price: 1 } });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});
