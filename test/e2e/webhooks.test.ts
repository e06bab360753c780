// Webhooks end to end: a local API of this file's own (its own tables on the suite's DynamoDB
// Local, retry delays compressed with MUSEUM_WEBHOOK_RETRY_SCALE), loopback receivers, and
// signatures checked with the Standard Webhooks reference library (npm `standardwebhooks`).
// Change items are put into the table as the store writes them (functions/changes/change-event.ts),
// so that the pipeline is tested on its own; the tests marked "(with the change feed)" use the
// API's own writes and the feed's cursors instead.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { CHANGE_ITEM, CHANGE_SOURCE, type ChangeType } from '../../functions/changes/change-event.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { WEBHOOK_PIPELINE, WEBHOOK_QUEUE_NAMES } from '../../functions/webhooks/pipeline-settings.ts';
import { LOCAL_REGION, localClient, localCredentials } from '../../lib/local/dynamodb-local.ts';
import { LOCAL_ACCOUNT } from '../../lib/local/sqs-stand-in.ts';
import { api, sampleEvent, type ApiResponse, type Credentials } from '../support/api-client.ts';
import { startFaultProxy, type FaultProxy } from '../../bench/support/fault-proxy.ts';
import { ungranted } from '../../bench/support/granted-access.ts';
import { startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS, testCredentialHash, testEnvironment } from '../support/test-environment.ts';
import { receiver, until } from '../support/webhook-receiver.ts';

const suffix = randomBytes(4).toString('hex');
const TABLE = `museum-webhooks-${suffix}`;
const USERS = {
  editor: TEST_USERS.editor,
  viewer: { username: 'webhook-viewer', password: 'webhook-viewer-password-1' },
  partnerA: { username: 'partner-a', password: 'partner-a-password-1' },
  partnerB: { username: 'partner-b', password: 'partner-b-password-1' },
};
let local: OwnLocalApi;
/** Between the local API and DynamoDB Local, injecting nothing: it records each function's requests for the grants check. */
let proxy: FaultProxy;
const documents = () => createDocumentClient(localClient(testEnvironment().dynamodbEndpoint));

const call = <T = unknown>(method: string, path: string, who: Credentials, json?: unknown): Promise<ApiResponse<T>> =>
  api<T>(method, path, { baseUrl: local.url, as: who, ...(json === undefined ? {} : { json }) });

/** Puts a change item as the store writes one, and returns its CloudEvent. */
async function putChange(eventId: string, type: ChangeType, version: number): Promise<{ id: string; text: string }> {
  const id = `chg_${randomUUID()}`;
  const event = { eventId, ...sampleEvent() };
  const text = JSON.stringify({
    specversion: '1.0',
    id,
    source: CHANGE_SOURCE,
    type,
    subject: eventId,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: {
      eventId,
      version,
      event: type === 'museum.special-event.deleted' ? null : event,
      previous: type === 'museum.special-event.created' ? null : event,
    },
  });
  await documents().send(
    new PutCommand({
      TableName: TABLE,
      Item: {
        pk: `${CHANGE_ITEM.pkPrefix}test`,
        sk: `${Date.now()}#${id}`,
        [CHANGE_ITEM.cloudEventAttribute]: text,
        [CHANGE_ITEM.typeAttribute]: type,
        [CHANGE_ITEM.eventIdAttribute]: eventId,
        [CHANGE_ITEM.expiresAtAttribute]: Math.floor(Date.now() / 1000) + 86_400,
      },
    }),
  );
  return { id, text };
}

async function subscribe(url: string, who: Credentials = USERS.partnerA, types?: ChangeType[]) {
  const created = await call<{ id: string; secret: string; types: string[] }>('POST', '/webhook-subscriptions', who, {
    url,
    ...(types ? { types } : {}),
  });
  expect(created.status).toBe(201);
  return created.body;
}

beforeAll(async () => {
  proxy = await startFaultProxy(testEnvironment().dynamodbEndpoint);
  local = await startOwnLocalApi('webhooks', {
    DYNAMODB_ENDPOINT: proxy.endpoint,
    TABLE_NAME: TABLE,
    IDEMPOTENCY_TABLE_NAME: `museum-webhooks-idempotency-${suffix}`,
    MUSEUM_ADMIN_PASSWORD: USERS.editor.password,
    MUSEUM_WEBHOOK_RETRY_SCALE: '0.001',
  });
  const client = localClient(testEnvironment().dynamodbEndpoint);
  const users = new UsersStore(createDocumentClient(client), TABLE);
  await users.putUser({ ...USERS.viewer, role: 'viewer', passwordHash: await testCredentialHash(USERS.viewer.password) }, 'create');
  await users.putUser({ ...USERS.partnerA, role: 'partner', passwordHash: await testCredentialHash(USERS.partnerA.password) }, 'create');
  await users.putUser({ ...USERS.partnerB, role: 'partner', passwordHash: await testCredentialHash(USERS.partnerB.password) }, 'create');
}, 240_000);

afterAll(async () => {
  await local.stop();
  await proxy.close();
});

test('a receiver subscribed to all types gets created, updated and deleted in order, each signature verified by standardwebhooks', async () => {
  const target = await receiver();
  const { secret } = await subscribe(target.url);
  const eventId = randomUUID();
  const sent = [
    await putChange(eventId, 'museum.special-event.created', 1),
    await putChange(eventId, 'museum.special-event.updated', 2),
    await putChange(eventId, 'museum.special-event.deleted', 3),
  ];
  await until(() => (target.received.length >= 3 ? true : undefined));
  expect(target.received.map((request) => request.headers['webhook-id'])).toEqual(sent.map((change) => change.id));
  for (const [index, request] of target.received.entries()) {
    expect(request.body).toBe(sent[index]?.text);
    expect(request.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(() => new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
  }
  target.server.close();
});

test('a receiver that answers 503 twice gets the change on the third attempt with the same webhook-id, and the deliveries list shows all three', async () => {
  const target = await receiver((n) => (n <= 2 ? 503 : 200));
  const { id: subscriptionId, secret } = await subscribe(target.url);
  const change = await putChange(randomUUID(), 'museum.special-event.created', 1);
  await until(() => (target.received.length >= 3 ? true : undefined));
  expect(new Set(target.received.map((request) => request.headers['webhook-id']))).toEqual(new Set([change.id]));
  for (const request of target.received) new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
  // The attempt is recorded once the receiver has answered: read until the third is there.
  let listed = await call<{ deliveries: { outcome: string; status: number }[] }>(
    'GET',
    `/webhook-subscriptions/${subscriptionId}/deliveries`,
    USERS.partnerA,
  );
  for (let tries = 0; listed.body.deliveries.length < 3 && tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    listed = await call('GET', `/webhook-subscriptions/${subscriptionId}/deliveries`, USERS.partnerA);
  }
  expect(listed.status).toBe(200);
  expect(listed.body.deliveries.map((attempt) => `${attempt.status} ${attempt.outcome}`)).toEqual([
    '200 delivered',
    '503 retrying',
    '503 retrying',
  ]);
  target.server.close();
}, 120_000);

test('a receiver that answers 410 is disabled, gets nothing more, and receives again once enabled', async () => {
  const target = await receiver((n) => (n === 1 ? 410 : 204));
  const { id } = await subscribe(target.url);
  await putChange(randomUUID(), 'museum.special-event.created', 1);
  await until(() => (target.received.length >= 1 ? true : undefined));
  let view = await call<{ enabled: boolean }>('GET', `/webhook-subscriptions/${id}`, USERS.partnerA);
  for (let tries = 0; view.body.enabled && tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    view = await call<{ enabled: boolean }>('GET', `/webhook-subscriptions/${id}`, USERS.partnerA);
  }
  expect(view.body.enabled).toBe(false);
  await putChange(randomUUID(), 'museum.special-event.created', 1);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  expect(target.received).toHaveLength(1);
  expect((await call('POST', `/webhook-subscriptions/${id}/enable`, USERS.partnerA)).status).toBe(200);
  const after = await putChange(randomUUID(), 'museum.special-event.created', 1);
  await until(() => target.received.find((request) => request.headers['webhook-id'] === after.id));
  target.server.close();
});

test('a subscription for museum.special-event.deleted receives only the cancellation', async () => {
  const target = await receiver();
  await subscribe(target.url, USERS.partnerA, ['museum.special-event.deleted']);
  const eventId = randomUUID();
  await putChange(eventId, 'museum.special-event.created', 1);
  await putChange(eventId, 'museum.special-event.updated', 2);
  const cancellation = await putChange(eventId, 'museum.special-event.deleted', 3);
  const marker = await receiver();
  await subscribe(marker.url, USERS.partnerB);
  await putChange(randomUUID(), 'museum.special-event.created', 1);
  await until(() => (target.received.length >= 1 && marker.received.length >= 1 ? true : undefined));
  expect(target.received.map((request) => request.headers['webhook-id'])).toEqual([cancellation.id]);
  target.server.close();
  marker.server.close();
});

test('during a rotation both the new and the old secret sign each delivery', async () => {
  const target = await receiver();
  const { id, secret: old } = await subscribe(target.url);
  const rotated = await call<{ secret: string }>('POST', `/webhook-subscriptions/${id}/secret`, USERS.partnerA);
  expect(rotated.status).toBe(200);
  expect(rotated.body.secret).not.toBe(old);
  await putChange(randomUUID(), 'museum.special-event.created', 1);
  const [request] = await until(() => (target.received.length >= 1 ? target.received : undefined));
  expect(String(request?.headers['webhook-signature']).split(' ')).toHaveLength(2);
  for (const secret of [old, rotated.body.secret]) {
    expect(() => new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>)).not.toThrow();
  }
  target.server.close();
});

test("a receiver down for an hour (compressed) loses nothing and sees each event's changes in order", async () => {
  let down = true;
  const target = await receiver(() => (down ? 503 : 204));
  await subscribe(target.url);
  const events = [randomUUID(), randomUUID(), randomUUID()];
  const sent = new Map<string, string[]>();
  for (let version = 1; version <= 4; version++) {
    for (const eventId of events) {
      const change = await putChange(eventId, version === 1 ? 'museum.special-event.created' : 'museum.special-event.updated', version);
      sent.set(eventId, [...(sent.get(eventId) ?? []), change.id]);
    }
  }
  // An hour at MUSEUM_WEBHOOK_RETRY_SCALE=0.001 is 3.6 s.
  await new Promise((resolve) => setTimeout(resolve, 3600));
  down = false;
  await until(() => {
    const ids = new Set(target.received.map((request) => String(request.headers['webhook-id'])));
    return [...sent.values()].flat().every((id) => ids.has(id)) ? true : undefined;
  }, 90_000);
  // Delivered (2xx) order per event: the last answered request of each id, in arrival order.
  for (const [eventId, ids] of sent) {
    const order = target.received
      .filter((request) => (JSON.parse(request.body) as { subject: string }).subject === eventId)
      .map((request) => String(request.headers['webhook-id']));
    const firstDeliveries = ids.map((id) => order.lastIndexOf(id));
    expect([...firstDeliveries].sort((a, b) => a - b)).toEqual(firstDeliveries);
  }
  target.server.close();
}, 120_000);

test('a change record the consumer cannot read is given up after its retries: its metadata, as Lambda documents it, names it in the stream, and later changes are delivered', async () => {
  const target = await receiver();
  await subscribe(target.url);
  // A change item whose CloudEvent is not JSON (a hand-made or corrupted item): the consumer reports it failed every time.
  const poisonKey = { pk: `${CHANGE_ITEM.pkPrefix}test`, sk: `${Date.now()}#chg_${randomUUID()}` };
  await documents().send(
    new PutCommand({
      TableName: TABLE,
      Item: {
        ...poisonKey,
        [CHANGE_ITEM.cloudEventAttribute]: 'not a CloudEvent',
        [CHANGE_ITEM.typeAttribute]: 'museum.special-event.updated',
        [CHANGE_ITEM.eventIdAttribute]: randomUUID(),
      },
    }),
  );
  // Read as an operator reads the on-failure queue (the local run prints its queues' endpoint).
  // The log file is written asynchronously: a line is waited for, not assumed there.
  const logged = (text: string) => until(() => (readFileSync(local.logFile, 'utf8').includes(text) ? true : undefined));
  const endpoint = await until(() => /queues at (http:\/\/\S+) \(SQS\)/.exec(readFileSync(local.logFile, 'utf8'))?.[1]);
  const sqs = new SQSClient({ endpoint, region: LOCAL_REGION, credentials: localCredentials(testEnvironment().dynamodbEndpoint) });
  const queueUrl = `${endpoint}/${LOCAL_ACCOUNT}/${WEBHOOK_QUEUE_NAMES.streamFailures}`;
  let body: string | undefined;
  for (const deadline = Date.now() + 60_000; !body && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200)))
    body = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1 }))).Messages?.[0]?.Body;
  sqs.destroy();
  expect(body).toBeDefined();
  const record = JSON.parse(body ?? '{}') as {
    requestContext: { condition: string; approximateInvokeCount: number; functionArn: string };
    version: string;
    DDBStreamBatchInfo: { shardId: string; startSequenceNumber: string; endSequenceNumber: string; batchSize: number; streamArn: string };
  };
  expect(record.version).toBe('1.0');
  expect(record.requestContext).toMatchObject({
    condition: 'RetryAttemptsExhausted',
    approximateInvokeCount: WEBHOOK_PIPELINE.stream.maximumRetryAttempts + 1,
  });
  expect(record.requestContext.functionArn).toMatch(/:function:webhook-change-consumer$/);
  const batch = record.DDBStreamBatchInfo;
  expect(batch).toMatchObject({ batchSize: 1, endSequenceNumber: batch.startSequenceNumber });
  // What the metadata is for: finding the record in the stream (services-dynamodb-errors.html).
  const streams = new DynamoDBStreamsClient({
    endpoint: testEnvironment().dynamodbEndpoint,
    region: LOCAL_REGION,
    credentials: localCredentials(testEnvironment().dynamodbEndpoint),
  });
  const iterator = await streams.send(
    new GetShardIteratorCommand({
      StreamArn: batch.streamArn,
      ShardId: batch.shardId,
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      SequenceNumber: batch.startSequenceNumber,
    }),
  );
  const found = await streams.send(new GetRecordsCommand({ ShardIterator: iterator.ShardIterator, Limit: 1 }));
  streams.destroy();
  expect(found.Records?.[0]?.dynamodb?.Keys).toEqual({ pk: { S: poisonKey.pk }, sk: { S: poisonKey.sk } });
  await logged(`gave up on 1 change record(s) of the stream (sequence numbers ${batch.startSequenceNumber} `);
  // The mapping went on past it.
  const later = await putChange(randomUUID(), 'museum.special-event.created', 1);
  await until(() => (target.received.some((request) => request.headers['webhook-id'] === later.id) ? true : undefined));
  expect(target.received.map((request) => request.headers['webhook-id'])).toEqual([later.id]);
  target.server.close();
}, 120_000);

describe('who may use the subscriptions', () => {
  test('a viewer gets 403, no credentials 401', async () => {
    expect((await call('GET', '/webhook-subscriptions', USERS.viewer)).status).toBe(403);
    expect((await call('POST', '/webhook-subscriptions', USERS.viewer, { url: 'http://127.0.0.1:9/x' })).status).toBe(403);
    expect((await call('GET', '/webhook-subscriptions', 'none')).status).toBe(401);
  });

  test('a partner sees and changes only its own subscriptions; an editor sees every one', async () => {
    const own = await subscribe('http://127.0.0.1:9/a', USERS.partnerA);
    const other = await subscribe('http://127.0.0.1:9/b', USERS.partnerB);
    const listed = await call<{ subscriptions: { id: string; owner: string }[] }>('GET', '/webhook-subscriptions', USERS.partnerA);
    expect(listed.body.subscriptions.every((subscription) => subscription.owner === USERS.partnerA.username)).toBe(true);
    expect(listed.body.subscriptions.map((subscription) => subscription.id)).toContain(own.id);
    expect((await call('GET', `/webhook-subscriptions/${other.id}`, USERS.partnerA)).status).toBe(404);
    expect((await call('DELETE', `/webhook-subscriptions/${other.id}`, USERS.partnerA)).status).toBe(404);
    expect((await call('POST', `/webhook-subscriptions/${other.id}/secret`, USERS.partnerA)).status).toBe(404);
    const all = await call<{ subscriptions: { id: string }[] }>('GET', '/webhook-subscriptions', USERS.editor);
    expect(all.body.subscriptions.map((subscription) => subscription.id)).toEqual(expect.arrayContaining([own.id, other.id]));
    expect((await call('DELETE', `/webhook-subscriptions/${other.id}`, USERS.editor)).status).toBe(204);
    expect((await call('DELETE', `/webhook-subscriptions/${own.id}`, USERS.partnerA)).status).toBe(204);
  });

  test('a private-address URL is refused with a problem, even by the local run', async () => {
    const refused = await call<{ type: string }>('POST', '/webhook-subscriptions', USERS.partnerA, { url: 'https://10.0.0.7/hook' });
    expect(refused.status).toBe(422);
    expect(refused.body.type).toMatch(/webhook-url-refused$/);
  });
});

describe('(with the change feed)', () => {
  test("the API's own create, update and delete reach a subscriber in order, signed", async () => {
    const target = await receiver();
    const { secret } = await subscribe(target.url);
    const created = await call<{ eventId: string }>('POST', '/special-events', USERS.editor, sampleEvent());
    expect(created.status).toBe(201);
    const path = `/special-events/${created.body.eventId}`;
    expect((await call('PATCH', path, USERS.editor, { price: 30 })).status).toBe(200);
    expect((await call('DELETE', path, USERS.editor)).status).toBe(204);
    await until(
      () => (target.received.filter((request) => request.body.includes(created.body.eventId)).length >= 3 ? true : undefined),
      30_000,
    );
    const types = target.received
      .filter((request) => request.body.includes(created.body.eventId))
      .map((request) => {
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
        return (JSON.parse(request.body) as { type: string }).type;
      });
    expect(types).toEqual(['museum.special-event.created', 'museum.special-event.updated', 'museum.special-event.deleted']);
    target.server.close();
  });

  test('a replay re-sends exactly the changes after its cursor, with their original ids', async () => {
    const target = await receiver();
    const { id } = await subscribe(target.url);
    const cursor = await call<{ next: string }>('GET', '/special-events/changes?since=now', USERS.editor);
    const created = await call<{ eventId: string }>('POST', '/special-events', USERS.editor, sampleEvent());
    await call('PATCH', `/special-events/${created.body.eventId}`, USERS.editor, { price: 31 });
    // Other tests' changes may reach this subscriber too (the feed and the stream are shared): follow this event's.
    const ours = () =>
      target.received
        .filter((request) => (JSON.parse(request.body) as { subject: string }).subject === created.body.eventId)
        .map((request) => String(request.headers['webhook-id']));
    await until(() => (ours().length >= 2 ? true : undefined), 30_000);
    const first = ours();
    const changesAfter = async (since: string) =>
      (await call<{ changes: { id: string }[] }>('GET', `/special-events/changes?since=${since}`, USERS.editor)).body.changes.map(
        (change) => change.id,
      );
    // A replay reads the feed, which releases a change only after its hold-back (CHANGE_FEED.holdBackMs):
    // replay once the feed lists both changes after the cursor.
    for (const deadline = Date.now() + 45_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 500))) {
      const listed = await changesAfter(cursor.body.next);
      if (first.every((changeId) => listed.includes(changeId))) break;
    }
    const replay = await call<{ queued: number; next: string; complete: boolean }>(
      'POST',
      `/webhook-subscriptions/${id}/replay`,
      USERS.partnerA,
      { since: cursor.body.next },
    );
    expect(replay.status).toBe(202);
    expect(replay.body.complete).toBe(true);
    // Exactly the feed's changes between the cursor and the replay's `next` (the subscription takes every type).
    const beyond = await changesAfter(replay.body.next);
    const replayable = (await changesAfter(cursor.body.next)).filter((changeId) => !beyond.includes(changeId));
    expect(replayable).toEqual(expect.arrayContaining(first));
    expect(replay.body.queued).toBe(replayable.length);
    await until(() => (ours().length >= 4 ? true : undefined), 30_000);
    expect(ours().slice(2)).toEqual(first);
    target.server.close();
  });
});

describe("the functions' IAM grants", () => {
  test('allow every DynamoDB request the webhook routes, the consumer and the delivery function sent above', () => {
    const recorded = proxy.accesses();
    expect(recorded.map(({ functionName }) => functionName)).toEqual(
      expect.arrayContaining(['webhook-change-consumer', 'webhook-delivery', 'create-webhook-subscription', 'replay-webhook-changes']),
    );
    expect(ungranted(recorded, { events: TABLE, idempotency: `museum-webhooks-idempotency-${suffix}` })).toEqual([]);
  });
});
