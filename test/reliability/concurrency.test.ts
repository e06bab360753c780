// Concurrency against the local API and DynamoDB Local: racing PATCHes and a DELETE must end in
// a state some serial order of the successful requests would produce, with no orphan index item;
// If-Match makes a lost update impossible. Every write carries an Idempotency-Key and is sent again
// after a 504 (on a busy machine a commit can outlive its time limit and its outcome be unknown), as
// docs/API.md tells a client to: the race then has only answers whose outcome is known.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { MONTH_INDEX, keys } from '../../functions/store/table-definition.ts';
import {
  api,
  apiRetrying,
  isRefused,
  useInjectedApi,
  withIdempotencyKey,
  type ApiResponse,
  type SpecialEventBody,
} from '../support/api-client.ts';
import { testEnvironment } from '../support/test-environment.ts';
import { recordFigures } from './figures.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { closeTableClient, storageProblems, tableClient } from './stored-items.ts';

const YEAR = RESERVED_YEARS.concurrency;
const PATCHES = 50;
const ROUNDS = 3;

useInjectedApi();
afterAll(() => closeTableClient());

async function createEvent(): Promise<SpecialEventBody> {
  const response = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
    json: { name: 'Race', location: 'Hall', eventDescription: 'Raced', dates: [dayOfYear(YEAR, 0)], price: 0 },
    headers: withIdempotencyKey(),
  });
  expect(response.status).toBe(201);
  return response.body;
}

/** The dates of the event's entries in the byMonth index, over every month its dates could be in. */
async function indexEntries(eventId: string): Promise<string[]> {
  const entries: string[] = [];
  for (let month = 1; month <= 12; month++) {
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await tableClient().send(
        new QueryCommand({
          TableName: testEnvironment().tableName,
          IndexName: MONTH_INDEX,
          KeyConditionExpression: 'gsi1pk = :month',
          ExpressionAttributeValues: { ':month': keys.monthIndexPartition(`${YEAR}-${String(month).padStart(2, '0')}`) },
          ExclusiveStartKey: exclusiveStartKey,
        }),
      );
      for (const item of page.Items ?? []) if (item.pk === keys.event(eventId).pk) entries.push(...keys.monthIndexEntry(item).dates);
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
  }
  return entries.sort();
}

/** A write sent once, and after a 504 again with its Idempotency-Key until its outcome is known (apiRetrying): a 409 or 503 to its first sending stays in the race. */
const writeOnce = <T>(method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
  apiRetrying<T>(method, path, { json, headers: withIdempotencyKey(headers) }, { statuses: [] });

const version = (response: ApiResponse) => Number(/^"(\d+)"$/.exec(response.headers.get('etag') ?? '')?.[1]);

/** The answers that are neither of the `expected` statuses nor refused (isRefused): each as its status and body. */
const unexpected = (responses: ApiResponse[], ...expected: number[]) =>
  responses
    .filter((response) => !expected.includes(response.status) && !isRefused(response))
    .map((response) => `${response.status} ${JSON.stringify(response.body ?? '')}`);

describe('50 concurrent PATCHes with different dates and a DELETE', () => {
  test('end in a serial outcome: consecutive versions for the winners, then either nothing or the last winner, and no orphan index item', async () => {
    const outcomes: Record<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const event = await createEvent();
      const path = `/special-events/${event.eventId}`;
      // Request i moves the event to day i+1 at price i. The DELETE goes out with them in the first
      // round, and once 5 or 20 PATCHes have been answered in the others, so that the rounds end
      // differently.
      let answered = 0;
      let releaseDelete: () => void = () => undefined;
      const deleteMayGo = new Promise<void>((resolve) => (releaseDelete = resolve));
      const deleteAfter = [0, 5, 20][round] ?? 0;
      if (deleteAfter === 0) releaseDelete();
      const patches = Array.from({ length: PATCHES }, (_, i) =>
        writeOnce<SpecialEventBody>('PATCH', path, { dates: [dayOfYear(YEAR, i + 1)], price: i }).then((response) => {
          if (++answered === deleteAfter) releaseDelete();
          return response;
        }),
      );
      const deletion = deleteMayGo.then(() => writeOnce('DELETE', path));
      const [patched, deleted] = await Promise.all([Promise.all(patches), deletion]);

      // 409 (lost the race) and 503 (DynamoDB Local too slow on a busy machine) both mean "not
      // written and never will be": the invariants below must hold with them.
      const statuses = patched.map((response) => response.status);
      expect(unexpected(patched, 200, 404)).toEqual([]);
      expect(unexpected([deleted], 204)).toEqual([]);

      // Each winner's answer is its own change, and the winners' versions are 2, 3, ... with no gap:
      // exactly what applying them one after the other gives.
      const winners = patched
        .map((response, i) => ({ response, i }))
        .filter(({ response }) => response.status === 200)
        .sort((a, b) => version(a.response) - version(b.response));
      for (const { response, i } of winners) {
        expect(response.body).toEqual({ ...event, dates: [dayOfYear(YEAR, i + 1)], price: i });
      }
      // A gap means a write that did not answer 200 took a version: the failure names every answer.
      const versions = winners.map(({ response }) => version(response));
      if (versions.some((v, n) => v !== n + 2)) {
        const answers = patched.map(
          (response, i) =>
            `${i}: ${response.status} ${response.headers.get('etag') ?? ''} ${response.status >= 400 ? JSON.stringify(response.body) : ''}`,
        );
        throw new Error(`versions ${versions.join()}; DELETE ${deleted.status}; PATCHes:\n${answers.join('\n')}`);
      }

      const read = await api<SpecialEventBody>('GET', path);
      if (deleted.status === 204) {
        // Serial order: the winners, the DELETE, then the PATCHes that found nothing (404).
        expect(read.status).toBe(404);
        expect(await storageProblems(event.eventId, undefined)).toEqual([]);
        expect(await indexEntries(event.eventId)).toEqual([]);
      } else {
        // The DELETE lost every retry (409, or 503): nothing deleted it, so nothing may have found it gone.
        expect(statuses).not.toContain(404);
        const last = winners.at(-1);
        const expected = last ? last.response.body : event;
        expect(read.body).toEqual(expected);
        expect(version(read)).toBe(winners.length + 1);
        expect(await storageProblems(event.eventId, expected)).toEqual([]);
        expect(await indexEntries(event.eventId)).toEqual(expected.dates);
      }
      outcomes.push({
        patch200: statuses.filter((s) => s === 200).length,
        patch404: statuses.filter((s) => s === 404).length,
        patch409: statuses.filter((s) => s === 409).length,
        delete: deleted.status,
      });
    }
    recordFigures('concurrent-patches-and-delete', { rounds: ROUNDS, patchesPerRound: PATCHES, outcomes });
    // Three rounds of 51 contending writes: on a busy machine well past the default limit, which
    // here only bounds a hang.
  }, 300_000);
});

describe('If-Match', () => {
  test('of 50 concurrent PATCHes sent with the same current ETag exactly one wins; the others get 412, or are refused (409 or 503 with Retry-After), and change nothing', async () => {
    const event = await createEvent();
    const path = `/special-events/${event.eventId}`;
    // A 409 or 503 (nothing written) is retried as a client does, with the same If-Match and
    // Idempotency-Key: it then wins or gets the 412 the others got, so every outcome is known.
    const responses = await Promise.all(
      Array.from({ length: PATCHES }, (_, i) =>
        apiRetrying<SpecialEventBody>('PATCH', path, {
          json: { dates: [dayOfYear(YEAR, 100 + i)], price: i },
          headers: withIdempotencyKey({ 'If-Match': '"1"' }),
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(unexpected(responses, 200, 412)).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const winner = responses.find((response) => response.status === 200);
    for (const loser of responses.filter((response) => response.status === 412)) {
      expect(loser.headers.get('content-type')).toBe('application/problem+json');
    }

    const read = await api<SpecialEventBody>('GET', path);
    const expected = winner?.body ?? event;
    expect(read.body).toEqual(expected);
    expect(read.headers.get('etag')).toBe(winner ? '"2"' : '"1"');
    expect(await storageProblems(event.eventId, expected)).toEqual([]);
    expect(await indexEntries(event.eventId)).toEqual(expected.dates);
    recordFigures('if-match-race', {
      patches: PATCHES,
      status200: statuses.filter((s) => s === 200).length,
      status412: statuses.filter((s) => s === 412).length,
      refused: responses.filter(isRefused).length,
    });
  });

  test('of 50 concurrent price changes sent with the same current ETag exactly one wins; the others get 412 or are refused', async () => {
    const event = await createEvent();
    const path = `/special-events/${event.eventId}`;
    const responses = await Promise.all(
      // A 409 or 503 (a cancelled transaction, as DynamoDB may answer) is retried as a client does,
      // with the same If-Match: it then wins or gets the 412 the others got.
      Array.from({ length: PATCHES }, (_, i) =>
        apiRetrying<SpecialEventBody>('PATCH', path, { json: { price: 100 + i }, headers: withIdempotencyKey({ 'If-Match': '"1"' }) }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(unexpected(responses, 200, 412)).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const winner = responses.find((response) => response.status === 200);
    if (winner) expect(winner.body).toEqual({ ...event, price: winner.body.price });
    const read = await api<SpecialEventBody>('GET', path);
    expect(read.body).toEqual(winner?.body ?? event);
    expect(read.headers.get('etag')).toBe(winner ? '"2"' : '"1"');
    expect(await storageProblems(event.eventId, winner?.body ?? event)).toEqual([]);
  });

  test('50 concurrent price changes without If-Match: each applies once or is refused with nothing written (409 or 503 with Retry-After, after the retries it was told to make); the winners have consecutive versions and the last one is stored', async () => {
    const event = await createEvent();
    const path = `/special-events/${event.eventId}`;
    // Every write reads the version, then commits on it: under this contention most lose the race
    // within their retry budget and answer 409 with Retry-After; the client retries as told.
    const change = (price: number) =>
      apiRetrying<SpecialEventBody>('PATCH', path, { json: { price }, headers: withIdempotencyKey() }, { attempts: 20 });
    const responses = await Promise.all(Array.from({ length: PATCHES }, (_, i) => change(200 + i)));
    expect(unexpected(responses, 200)).toEqual([]);
    const winners = responses.filter((response) => response.status === 200).sort((a, b) => version(a) - version(b));
    expect(winners.length).toBeGreaterThan(0);
    // Each winner applied once: versions 2, 3, ... with no gap and no repeat.
    expect(winners.map(version)).toEqual(winners.map((_, n) => n + 2));
    const read = await api<SpecialEventBody>('GET', path);
    const last = winners.at(-1) as ApiResponse<SpecialEventBody>;
    expect(read.body).toEqual(last.body);
    expect(version(read)).toBe(winners.length + 1);
    expect(await storageProblems(event.eventId, read.body)).toEqual([]);
    expect(await indexEntries(event.eventId)).toEqual(event.dates);
    recordFigures('concurrent-price-changes', { patches: PATCHES, applied: winners.length, refused: PATCHES - winners.length });
  }, 120_000);

  test('a DELETE with a stale ETag is 412 and keeps the event; with the current ETag it deletes it', async () => {
    const event = await createEvent();
    const path = `/special-events/${event.eventId}`;
    const patched = await apiRetrying('PATCH', path, { json: { price: 7 }, headers: withIdempotencyKey() });
    expect(patched.headers.get('etag')).toBe('"2"');

    const stale = await apiRetrying('DELETE', path, { headers: withIdempotencyKey({ 'If-Match': '"1"' }) });
    expect(stale.status).toBe(412);
    expect((await api('GET', path)).status).toBe(200);

    expect((await apiRetrying('DELETE', path, { headers: withIdempotencyKey({ 'If-Match': '"2"' }) })).status).toBe(204);
    expect(await storageProblems(event.eventId, undefined)).toEqual([]);
  });

  test('of 10 concurrent DELETEs, each with its Idempotency-Key, exactly one deletes; the others find nothing (404) or are refused', async () => {
    const event = await createEvent();
    // A 409 or 503 (nothing written) is sent again as a client does, with its key: it then deletes or finds nothing.
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => apiRetrying('DELETE', `/special-events/${event.eventId}`, { headers: withIdempotencyKey() })),
    );
    const statuses = responses.map((response) => response.status);
    expect(unexpected(responses, 204, 404)).toEqual([]);
    expect(statuses.filter((status) => status === 204)).toHaveLength(1);
    expect(await storageProblems(event.eventId, undefined)).toEqual([]);
  });
});
