// The local SQS stand-in (lib/local/sqs-stand-in.ts, its API lib/local/sqs-api.ts), spoken to with
// the AWS SDK as the webhook functions and an operator speak to SQS, and checked against the rules
// of the SQS pages it cites: who it answers, the sizes it accepts, visibility and receipt handles,
// ReceiveMessage's parameters, FIFO's rules and the dead-letter queue's enqueue time. Where a rule
// depends on the clock (12 hours, retention), the queue model is driven in-process with explicit
// times. Each test fails against the stand-in that accepted anything.
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { AwsJsonEndpoint } from '../../lib/local/aws-json-endpoint.ts';
import { privateDirectory } from '../../lib/local/private-files.ts';
import { MAX_SQS_REQUEST_BYTES, serveSqs } from '../../lib/local/sqs-api.ts';
import { messagesToKeep } from '../../lib/local/sqs-partial-batch.ts';
import { MAX_MESSAGE_BYTES } from '../../lib/local/sqs-errors.ts';
import { LOCAL_ACCOUNT, LocalSqs } from '../../lib/local/sqs-stand-in.ts';

const KEY_ID = 'RUNKEYID0123456789';
const SOURCE = 'deliveries.fifo';
const DEAD_LETTERS = 'deliveries-dead-letters.fifo';
/** A standard queue per test, so that what one test leaves in flight is not counted by another. */
const PLAIN = {
  auth: 'auth',
  sizes: 'sizes',
  visibility: 'visibility',
  handles: 'handles',
  receive: 'receive',
  delay: 'delay',
  files: 'files',
};
const HOUR = 3600_000;

let sqs: LocalSqs;
let endpoint: AwsJsonEndpoint;
let client: SQSClient;
let directory: string;

const sqsClient = (accessKeyId = KEY_ID) =>
  new SQSClient({ endpoint: endpoint.url, region: 'eu-west-1', credentials: { accessKeyId, secretAccessKey: 'local' }, maxAttempts: 1 });
const url = (queue: string) => sqs.queueUrl(endpoint.url, queue);

/** The SDK error a call ends with: its name and HTTP status. */
async function failure(call: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  const error = (await call.then(
    () => undefined,
    (caught: unknown) => caught,
  )) as { name: string; message: string; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!error) throw new Error('the call succeeded');
  return { name: error.name, status: error.$metadata?.httpStatusCode, message: error.message };
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'museum-sqs-'));
  sqs = new LocalSqs(
    [
      {
        name: SOURCE,
        visibilityTimeoutSeconds: 30,
        retentionSeconds: 3600,
        redrive: { deadLetterQueue: DEAD_LETTERS, maxReceiveCount: 2 },
      },
      { name: DEAD_LETTERS, visibilityTimeoutSeconds: 30, retentionSeconds: 3600 },
      ...Object.values(PLAIN).map((name) => ({ name, visibilityTimeoutSeconds: 30, retentionSeconds: 3600 })),
    ],
    join(directory, 'webhooks', 'sqs.json'),
  );
  endpoint = await serveSqs(sqs, { accessKeyId: KEY_ID });
  client = sqsClient();
});

afterAll(async () => {
  client.destroy();
  await endpoint.close();
  await rm(directory, { recursive: true, force: true });
});

/** Receives everything visible of `queue` and deletes it, so that each test starts from an empty queue. */
async function drain(queue: string): Promise<void> {
  for (;;) {
    const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: url(queue), MaxNumberOfMessages: 10 }));
    if (Messages.length === 0) return;
    for (const message of Messages)
      await client.send(new DeleteMessageCommand({ QueueUrl: url(queue), ReceiptHandle: message.ReceiptHandle }));
  }
}

/** Receives from `queue` and makes what it got visible again at once (a failed attempt), returning the bodies. */
async function receiveAndFail(queue: string): Promise<string[]> {
  const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: url(queue), MaxNumberOfMessages: 10 }));
  for (const message of Messages) {
    await client.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url(queue), ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }),
    );
  }
  return Messages.map((message) => message.Body ?? '');
}

const fifo = (body: string, id: string, extra: Partial<{ DelaySeconds: number; MessageGroupId: string }> = {}) =>
  new SendMessageCommand({ QueueUrl: url(SOURCE), MessageBody: body, MessageGroupId: 'g', MessageDeduplicationId: id, ...extra });

test('a message received maxReceiveCount times moves to the dead-letter queue, and StartMessageMoveTask sends it back', async () => {
  await client.send(fifo('change-1', 'd1'));

  expect(await receiveAndFail(SOURCE)).toEqual(['change-1']);
  expect(await receiveAndFail(SOURCE)).toEqual(['change-1']);
  // A third receive would pass maxReceiveCount: the message goes to the dead-letter queue instead.
  expect(await receiveAndFail(SOURCE)).toEqual([]);
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(1);

  await client.send(new StartMessageMoveTaskCommand({ SourceArn: `arn:aws:sqs:eu-west-1:${LOCAL_ACCOUNT}:${DEAD_LETTERS}` }));
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(0);
  // Back in its source queue with its receive count reset: it can be delivered again.
  expect(await receiveAndFail(SOURCE)).toEqual(['change-1']);
  await drain(SOURCE);
});

test('StartMessageMoveTask: a dead letter the function sent itself moves only with a DestinationArn, as a new message', async () => {
  const arn = (queue: string) => `arn:aws:sqs:eu-west-1:${LOCAL_ACCOUNT}:${queue}`;
  const sent = await client.send(
    new SendMessageCommand({ QueueUrl: url(DEAD_LETTERS), MessageBody: 'given-up', MessageGroupId: 'g', MessageDeduplicationId: 'dl1' }),
  );
  // No source queue to send it back to: the task moves nothing, and the message is not lost.
  await client.send(new StartMessageMoveTaskCommand({ SourceArn: arn(DEAD_LETTERS) }));
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(1);
  expect(sqs.counts(SOURCE).visible).toBe(0);
  // Only a dead-letter queue is a source; the destination must exist and be of the same type.
  expect(await failure(client.send(new StartMessageMoveTaskCommand({ SourceArn: arn(SOURCE) })))).toMatchObject({
    name: 'UnsupportedOperation',
    status: 400,
  });
  for (const [destination, name] of [
    ['nowhere.fifo', 'ResourceNotFoundException'],
    [PLAIN.auth, 'InvalidParameterValue'],
  ] as const)
    expect(
      await failure(client.send(new StartMessageMoveTaskCommand({ SourceArn: arn(DEAD_LETTERS), DestinationArn: arn(destination) }))),
    ).toMatchObject({ name, status: 400 });
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(1);

  await client.send(new StartMessageMoveTaskCommand({ SourceArn: arn(DEAD_LETTERS), DestinationArn: arn(SOURCE) }));
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(0);
  const { Messages = [] } = await client.send(
    new ReceiveMessageCommand({ QueueUrl: url(SOURCE), MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
  );
  expect(Messages.map((message) => message.Body)).toEqual(['given-up']);
  // A redriven message is a new message: a new id, received for the first time.
  expect(Messages[0]?.MessageId).not.toBe(sent.MessageId);
  expect(Messages[0]?.Attributes?.ApproximateReceiveCount).toBe('1');
  await client.send(new DeleteMessageCommand({ QueueUrl: url(SOURCE), ReceiptHandle: Messages[0]?.ReceiptHandle }));
});

test('only the run’s access key id is answered: unsigned is MissingAuthenticationToken, another key InvalidClientTokenId (403 both)', async () => {
  const other = sqsClient('SOMEONEELSE');
  expect(await failure(other.send(new SendMessageCommand({ QueueUrl: url(PLAIN.auth), MessageBody: 'forged' })))).toMatchObject({
    name: 'InvalidClientTokenId',
    status: 403,
  });
  expect(await failure(other.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.auth) })))).toMatchObject({
    name: 'InvalidClientTokenId',
  });
  other.destroy();
  const unsigned = await fetch(endpoint.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.SendMessage' },
    body: JSON.stringify({ QueueUrl: url(PLAIN.auth), MessageBody: 'forged' }),
  });
  expect(unsigned.status).toBe(403);
  expect(unsigned.headers.get('x-amzn-query-error')).toBe('MissingAuthenticationToken;Sender');
  expect(sqs.counts(PLAIN.auth)).toEqual({ visible: 0, notVisible: 0 });
});

test('a body is 1 byte to 1 MiB (1,048,576 bytes), a batch’s bodies at most 1 MiB together', async () => {
  const largest = 'x'.repeat(MAX_MESSAGE_BYTES);
  await client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.sizes), MessageBody: largest }));
  const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.sizes) }));
  expect(Messages[0]?.Body).toBe(largest);
  await client.send(new DeleteMessageCommand({ QueueUrl: url(PLAIN.sizes), ReceiptHandle: Messages[0]?.ReceiptHandle }));
  // One byte more: a two-byte character at the end makes it 1,048,577 bytes in 1,048,576 characters.
  const over = `${'x'.repeat(MAX_MESSAGE_BYTES - 1)}é`;
  expect(await failure(client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.sizes), MessageBody: over })))).toMatchObject({
    name: 'InvalidParameterValue',
    status: 400,
  });
  const half = 'y'.repeat(MAX_MESSAGE_BYTES / 2 + 1);
  const batch = new SendMessageBatchCommand({
    QueueUrl: url(PLAIN.sizes),
    Entries: [
      { Id: 'a', MessageBody: half },
      { Id: 'b', MessageBody: half },
    ],
  });
  expect(await failure(client.send(batch))).toMatchObject({ name: 'BatchRequestTooLong', status: 400 });
  expect(sqs.counts(PLAIN.sizes)).toEqual({ visible: 0, notVisible: 0 });
});

/** Sends `bytes` of body to the endpoint, signed, in 1 MiB chunks, until the answer comes; resolves with its status and what had been sent by then. */
function oversizedRequest(bytes: number, declareLength: boolean): Promise<{ status: number; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const outgoing = request(endpoint.url, {
      method: 'POST',
      headers: {
        Authorization: `AWS4-HMAC-SHA256 Credential=${KEY_ID}/20260101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=0`,
        'X-Amz-Target': 'AmazonSQS.SendMessage',
        ...(declareLength ? { 'Content-Length': String(bytes) } : {}),
      },
    });
    outgoing.on('response', (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, sentBytes: sent });
    });
    outgoing.on('error', (error) => (sent >= bytes ? reject(error) : undefined));
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const write = () => {
      while (sent < bytes && !outgoing.destroyed) {
        sent += chunk.length;
        if (!outgoing.write(chunk)) return void outgoing.once('drain', write);
      }
      if (sent >= bytes) outgoing.end();
    };
    write();
  });
}

test('a request body over the bound is refused with 413 before it is read whole (150 MiB, declared or chunked)', async () => {
  const size = 150 * 1024 * 1024;
  const declared = await oversizedRequest(size, true);
  expect(declared.status).toBe(413);
  expect(declared.sentBytes).toBeLessThan(size);
  const chunked = await oversizedRequest(size, false);
  expect(chunked.status).toBe(413);
  // Refused at the bound, not at the end: what was sent by then is the bound plus what sockets buffer.
  expect(chunked.sentBytes).toBeLessThan(size / 2);
  expect(MAX_SQS_REQUEST_BYTES).toBeLessThan(3 * MAX_MESSAGE_BYTES);
});

test('ChangeMessageVisibility: 0 to 43,200 s, and never past 12 hours from the receive ("greater than the maximum time left")', async () => {
  await client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.visibility), MessageBody: 'long' }));
  const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.visibility) }));
  const handle = Messages[0]?.ReceiptHandle;
  await new Promise((resolve) => setTimeout(resolve, 20));
  // Set a moment after the receive, 43,200 s reaches past 12 hours from it: what the delivery function did.
  expect(
    await failure(
      client.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: url(PLAIN.visibility), ReceiptHandle: handle, VisibilityTimeout: 43_200 }),
      ),
    ),
  ).toMatchObject({
    name: 'InvalidParameterValue',
    status: 400,
  });
  await client.send(
    new ChangeMessageVisibilityCommand({ QueueUrl: url(PLAIN.visibility), ReceiptHandle: handle, VisibilityTimeout: 43_000 }),
  );
  await drain(PLAIN.visibility);

  // The clock, in-process: received at t0, the time left shrinks as time passes.
  const t0 = Date.now();
  sqs.send(PLAIN.visibility, { body: 'clock' }, t0);
  const [received] = sqs.receive(PLAIN.visibility, 1, { now: t0 });
  const receipt = received?.receiptHandle ?? '';
  sqs.changeVisibility(PLAIN.visibility, receipt, 43_200, t0);
  sqs.changeVisibility(PLAIN.visibility, receipt, 6 * 3600, t0 + 6 * HOUR);
  expect(() => sqs.changeVisibility(PLAIN.visibility, receipt, 6 * 3600 + 1, t0 + 6 * HOUR)).toThrow(/beyond the limit \[43200 seconds\]/);
  expect(() => sqs.changeVisibility(PLAIN.visibility, receipt, 43_201, t0)).toThrow(/Must be between 0 and 43200/);
  sqs.delete(PLAIN.visibility, receipt);
});

test('receipt handles: an invented one is ReceiptHandleIsInvalid (404); an earlier receive’s is not in flight and deletes nothing', async () => {
  for (const command of [
    new ChangeMessageVisibilityCommand({ QueueUrl: url(PLAIN.handles), ReceiptHandle: 'invented', VisibilityTimeout: 0 }),
    new DeleteMessageCommand({ QueueUrl: url(PLAIN.handles), ReceiptHandle: 'invented' }),
  ]) {
    expect(await failure(client.send(command as ChangeMessageVisibilityCommand))).toMatchObject({
      name: 'ReceiptHandleIsInvalid',
      status: 404,
    });
  }
  await client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.handles), MessageBody: 'twice' }));
  const first = (await client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.handles), VisibilityTimeout: 0 }))).Messages?.[0];
  // Visible again at once (VisibilityTimeout 0): the first handle names a receive no longer in flight.
  expect(
    await failure(
      client.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: url(PLAIN.handles), ReceiptHandle: first?.ReceiptHandle, VisibilityTimeout: 10 }),
      ),
    ),
  ).toMatchObject({
    name: 'MessageNotInflight',
  });
  const second = (await client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.handles) }))).Messages?.[0];
  expect(second?.MessageId).toBe(first?.MessageId);
  expect(second?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
  // "If you use an old ReceiptHandle, the request will succeed, but the message might not be deleted."
  await client.send(new DeleteMessageCommand({ QueueUrl: url(PLAIN.handles), ReceiptHandle: first?.ReceiptHandle }));
  expect(sqs.counts(PLAIN.handles).notVisible).toBe(1);
  await client.send(new DeleteMessageCommand({ QueueUrl: url(PLAIN.handles), ReceiptHandle: second?.ReceiptHandle }));
  expect(sqs.counts(PLAIN.handles)).toEqual({ visible: 0, notVisible: 0 });
});

test('ReceiveMessage: MaxNumberOfMessages 1 to 10, WaitTimeSeconds 0 to 20 (long polling), VisibilityTimeout for this receive, attributes as asked', async () => {
  for (const [name, value] of [
    ['MaxNumberOfMessages', 11],
    ['MaxNumberOfMessages', 0],
    ['WaitTimeSeconds', 21],
    ['VisibilityTimeout', 43_201],
  ] as const) {
    const refused = await failure(client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.receive), [name]: value })));
    expect(refused.name).toBe('InvalidParameterValue');
    expect(refused.message).toContain(`Value ${value} for parameter ${name} is invalid`);
  }
  // Long polling: the answer waits for a message sent after the request.
  const waiting = client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.receive), WaitTimeSeconds: 20 }));
  setTimeout(() => void client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.receive), MessageBody: 'awaited' })), 300);
  const awaited = (await waiting).Messages?.[0];
  expect(awaited?.Body).toBe('awaited');
  // No attribute unless asked for.
  expect(awaited?.Attributes).toBeUndefined();
  await client.send(
    new ChangeMessageVisibilityCommand({ QueueUrl: url(PLAIN.receive), ReceiptHandle: awaited?.ReceiptHandle, VisibilityTimeout: 0 }),
  );
  const asked = await client.send(
    new ReceiveMessageCommand({
      QueueUrl: url(PLAIN.receive),
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      VisibilityTimeout: 0,
    }),
  );
  expect(asked.Messages?.[0]?.Attributes).toEqual({ ApproximateReceiveCount: '2' });
  // VisibilityTimeout 0 on the receive: visible again at once, although the queue's is 30 s.
  const again = await client.send(new ReceiveMessageCommand({ QueueUrl: url(PLAIN.receive), MessageSystemAttributeNames: ['All'] }));
  expect(again.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('3');
  expect(again.Messages?.[0]?.Attributes?.SentTimestamp).toMatch(/^\d+$/);
  await drain(PLAIN.receive);
  await client.send(new DeleteMessageCommand({ QueueUrl: url(PLAIN.receive), ReceiptHandle: again.Messages?.[0]?.ReceiptHandle }));
});

test('FIFO: no DelaySeconds of a message’s own (0 is accepted), MessageGroupId required, a deduplicated send answers the first message id', async () => {
  const delayed = await failure(client.send(fifo('late', 'late', { DelaySeconds: 5 })));
  expect(delayed.name).toBe('InvalidParameterValue');
  expect(delayed.message).toContain('not valid for this queue type');
  expect(
    await failure(client.send(new SendMessageCommand({ QueueUrl: url(SOURCE), MessageBody: 'no group', MessageDeduplicationId: 'n' }))),
  ).toMatchObject({ name: 'MissingParameter' });
  const first = await client.send(fifo('once', 'same', { DelaySeconds: 0 }));
  const repeated = await client.send(fifo('once', 'same'));
  expect(repeated.MessageId).toBe(first.MessageId);
  expect(sqs.counts(SOURCE)).toEqual({ visible: 1, notVisible: 0 });
  await drain(SOURCE);
  // A standard queue honours a message's DelaySeconds.
  await client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.delay), MessageBody: 'later', DelaySeconds: 60 }));
  expect(sqs.counts(PLAIN.delay)).toEqual({ visible: 0, notVisible: 1 });
  expect(
    await failure(client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.delay), MessageBody: 'x', DelaySeconds: 901 }))),
  ).toMatchObject({
    name: 'InvalidParameterValue',
  });
});

test.each([
  ['a FIFO queue resets the enqueue time: the dead letter lives the whole retention of the dead-letter queue', true],
  ['a standard queue keeps the enqueue time: retention counts from the first send', false],
])('dead-letter retention: %s', (_title, isFifo) => {
  const [source, deadLetters] = isFifo ? ['a.fifo', 'a-dead.fifo'] : ['a', 'a-dead'];
  const day = 24 * HOUR;
  const queues = new LocalSqs([
    {
      name: source,
      visibilityTimeoutSeconds: 30,
      retentionSeconds: 14 * 86_400,
      redrive: { deadLetterQueue: deadLetters, maxReceiveCount: 1 },
    },
    { name: deadLetters, visibilityTimeoutSeconds: 30, retentionSeconds: 4 * 86_400 },
  ]);
  const t0 = Date.now();
  queues.send(source, { body: 'b', ...(isFifo ? { groupId: 'g', deduplicationId: 'd' } : {}) }, t0);
  expect(queues.receive(source, 1, { now: t0 })).toHaveLength(1);
  // After a day in the source queue, the next receive moves it to the dead-letter queue.
  expect(queues.receive(source, 1, { now: t0 + day })).toEqual([]);
  // Four days after the first send, but three after the move.
  const found = queues.receive(deadLetters, 1, { now: t0 + 4 * day + 1000 });
  expect(found.map((message) => message.body)).toEqual(isFifo ? ['b'] : []);
  if (isFifo) expect(queues.receive(deadLetters, 1, { now: t0 + 5 * day + 1000 })).toEqual([]);
});

test('ReportBatchItemFailures: an empty or null answer deletes all; an invalid item failure keeps the whole batch', () => {
  const batch = [{ messageId: 'm1' }, { messageId: 'm2' }];
  for (const success of [undefined, null, {}, { batchItemFailures: [] }, { batchItemFailures: null }])
    expect(messagesToKeep(batch, success)).toEqual(new Set());
  expect(messagesToKeep(batch, { batchItemFailures: [{ itemIdentifier: 'm2' }] })).toEqual(new Set(['m2']));
  for (const invalid of [
    { batchItemFailures: [{ itemIdentifier: '' }] },
    { batchItemFailures: [{ itemIdentifier: null }] },
    { batchItemFailures: [{ ItemIdentifier: 'm1' }] },
    { batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'not-in-batch' }] },
    { batchItemFailures: 'm1' },
    'not an object',
  ])
    expect(messagesToKeep(batch, invalid)).toEqual(new Set(['m1', 'm2']));
});

test('queued bodies are written to a 0600 file in a 0700 directory, and an earlier run’s readable ones are made private', async () => {
  await client.send(new SendMessageCommand({ QueueUrl: url(PLAIN.files), MessageBody: 'persisted' }));
  await new Promise((resolve) => setImmediate(resolve));
  expect(statSync(join(directory, 'webhooks')).mode & 0o777).toBe(0o700);
  expect(statSync(join(directory, 'webhooks', 'sqs.json')).mode & 0o777).toBe(0o600);
  const earlier = join(directory, 'earlier');
  mkdirSync(earlier, { mode: 0o755 });
  chmodSync(earlier, 0o755);
  writeFileSync(join(earlier, 'sqs.json'), '{}', { mode: 0o644 });
  privateDirectory(earlier);
  expect(statSync(earlier).mode & 0o777).toBe(0o700);
  expect(statSync(join(earlier, 'sqs.json')).mode & 0o777).toBe(0o600);
  await drain(PLAIN.files);
});
