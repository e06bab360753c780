// Idempotent creation: POST with an Idempotency-Key answers a retry with the first response
// (for 24 hours), refuses the same key with another body, and scopes keys to the user.
import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { LOCAL_TABLE_NAMES } from '../../lib/local/local-tables.ts';
import { api, apiRetrying, useInjectedApi, type SpecialEventBody } from '../support/api-client.ts';
import { testCredentialHash, testEnvironment } from '../support/test-environment.ts';
import { documentedProblemKind } from './problem-check.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { baseItemsNamed, closeTableClient, tableClient } from './stored-items.ts';

useInjectedApi();
afterAll(() => closeTableClient());

function body(name: string) {
  return { name, location: 'Hall', eventDescription: 'Idempotent', dates: [dayOfYear(RESERVED_YEARS.scratch, 200)], price: 12.5 };
}

/**
 * A POST as a client sends it: a 409 or 503 with Retry-After (nothing was written; DynamoDB
 * cancelled or throttled the write, as it may at any time) is sent again after it, with the same
 * Idempotency-Key (apiRetrying). The assertions are about what the API answers once it has answered.
 */
function post(json: unknown, key?: string, as?: { username: string; password: string }) {
  return apiRetrying<SpecialEventBody>('POST', '/special-events', {
    json,
    ...(key ? { headers: { 'Idempotency-Key': key } } : {}),
    ...(as ? { as } : {}),
  });
}

describe('POST /special-events with an Idempotency-Key', () => {
  test('a retry with the same key and body gets the same 201 and event; only one event is stored', async () => {
    const name = `Idempotent ${randomUUID()}`;
    const key = randomUUID();
    const first = await post(body(name), key);
    const again = await post(body(name), key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await baseItemsNamed(name)).toHaveLength(1);
  });

  test('racing requests with the same key all get the one event it created', async () => {
    const name = `Racing ${randomUUID()}`;
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body(name), key)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((answer) => answer.body.eventId)).size).toBe(1);
    expect(await baseItemsNamed(name)).toHaveLength(1);
  });

  test('the same event sent with its dates in another order is the same request', async () => {
    const name = `Reordered ${randomUUID()}`;
    const key = randomUUID();
    const dates = [dayOfYear(RESERVED_YEARS.scratch, 201), dayOfYear(RESERVED_YEARS.scratch, 202)];
    const first = await post({ ...body(name), dates }, key);
    const again = await post({ ...body(name), dates: [...dates].reverse() }, key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  test('the same key with a different body is a 422 problem and stores nothing', async () => {
    const key = randomUUID();
    const name = `Original ${randomUUID()}`;
    expect((await post(body(name), key)).status).toBe(201);
    const other = `Different ${randomUUID()}`;
    const reused = await post(body(other), key);
    expect(reused.status).toBe(422);
    expect(documentedProblemKind(reused)).toBe('idempotency-key-reused');
    expect(await baseItemsNamed(other)).toHaveLength(0);
  });

  test('keys are per user: another editor with the same key and body creates its own event', async () => {
    const users = new UsersStore(tableClient(), testEnvironment().tableName);
    const otherEditor = { username: `editor-idem-${Date.now().toString(36)}`, password: 'another-editor-password-of-20' };
    await users.putUser({ ...otherEditor, role: 'editor', passwordHash: await testCredentialHash(otherEditor.password) }, 'create');
    const name = `Shared key ${randomUUID()}`;
    const key = randomUUID();
    const mine = await post(body(name), key);
    const theirs = await post(body(name), key, otherEditor);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.eventId).not.toBe(mine.body.eventId);
    expect(await baseItemsNamed(name)).toHaveLength(2);
  });

  test('without a key, two identical POSTs create two events', async () => {
    const name = `No key ${randomUUID()}`;
    const [a, b] = [await post(body(name)), await post(body(name))];
    expect(a.body.eventId).not.toBe(b.body.eventId);
    expect(await baseItemsNamed(name)).toHaveLength(2);
  });

  test('an empty key or one over 255 characters is a 400 problem', async () => {
    for (const key of ['', 'k'.repeat(256)]) {
      const response = await api('POST', '/special-events', { json: body('Bad key'), headers: { 'Idempotency-Key': key } });
      expect(response.status).toBe(400);
      expect(documentedProblemKind(response)).toBe('validation-error');
    }
  });

  test('the stored record expires 24 hours after the request', async () => {
    const before = Math.floor(Date.now() / 1000);
    expect((await post(body(`Expiry ${randomUUID()}`), randomUUID())).status).toBe(201);
    const { Items = [] } = await tableClient().send(new ScanCommand({ TableName: LOCAL_TABLE_NAMES.idempotency }));
    const newest = Items.sort((a, b) => Number(b.expiration) - Number(a.expiration))[0];
    const lifetime = Number(newest?.expiration) - before;
    expect(lifetime).toBeGreaterThanOrEqual(24 * 3600);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600 + 60);
  });
});
