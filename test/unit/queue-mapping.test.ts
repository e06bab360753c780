// The local SQS event source mapping on the SQS stand-in, in process, with a function that the
// test holds or lets go: it runs one invocation per message group ready, up to the maximum
// concurrency (services-sqs-scaling.html), and a stop returns the messages of invocations still
// running at once (ChangeMessageVisibility 0).
import { failedMessages, startQueueMapping } from '../../lib/local/queue-mapping.ts';
import { LocalSqs } from '../../lib/local/sqs-stand-in.ts';

const QUEUE = 'deliveries.fifo';

function setUp(maximumConcurrency: number, groups: string[]) {
  const sqs = new LocalSqs([{ name: QUEUE, visibilityTimeoutSeconds: 360, retentionSeconds: 3600 }]);
  for (const [index, group] of groups.entries()) sqs.send(QUEUE, { body: `m${index}`, groupId: group, deduplicationId: `d${index}` });
  const running: { resolve: (answer: unknown) => void; bodies: string[] }[] = [];
  const mapping = startQueueMapping({
    sqs,
    queueName: QUEUE,
    queueArn: `arn:aws:sqs:local:000000000000:${QUEUE}`,
    region: 'local',
    account: '000000000000',
    batchSize: 1,
    maximumConcurrency,
    // Held until the test lets it go: as a delivery to a receiver that does not answer.
    invoke: (event) =>
      new Promise((resolve) => {
        const records =
          typeof event === 'object' && event !== null && 'Records' in event && Array.isArray(event.Records) ? event.Records : [];
        running.push({ resolve, bodies: records.map((record: { body: string }) => record.body) });
      }),
    stopWaitMs: 50,
    log: () => undefined,
  });
  return { sqs, running, mapping };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

test('one invocation per message group with a message ready, in group order, up to the maximum concurrency', async () => {
  const { running, mapping } = setUp(2, ['a', 'a', 'b', 'c']);
  await settle();
  // Groups a and b take the two invocations; a's second message waits for its first, c for a free invocation.
  expect(running.map((invocation) => invocation.bodies)).toEqual([['m0'], ['m2']]);
  running[0]?.resolve({ batchItemFailures: [] });
  await settle();
  expect(running.slice(2).map((invocation) => invocation.bodies)).toEqual([['m1']]);
  for (const invocation of running) invocation.resolve(null);
  await mapping.stop();
});

test('a stop takes no more batches and makes the messages of invocations still running visible again at once', async () => {
  const { sqs, running, mapping } = setUp(10, ['a', 'b']);
  await settle();
  expect(running).toHaveLength(2);
  running[0]?.resolve(null); // finished: deleted
  await settle();
  await mapping.stop(); // b's invocation is still running after the wait
  expect(sqs.receive(QUEUE, 10).map((message) => message.body)).toEqual(['m1']);
});

test('the local queue mapping reads a partial batch response as Lambda does: an invalid identifier fails the whole batch', () => {
  const batch = ['m1', 'm2', 'm3'].map((messageId) => ({ messageId, receiptHandle: messageId, body: '', attributes: {} as never }));
  expect(failedMessages(batch, { batchItemFailures: [] })).toBeUndefined();
  expect(failedMessages(batch, null)).toBeUndefined();
  expect(failedMessages(batch, { batchItemFailures: [{ itemIdentifier: 'm2' }] })).toEqual(new Set(['m2']));
  for (const invalid of [{ itemIdentifier: '' }, { itemIdentifier: null }, { itemIdentifier: 'm9' }, {}])
    expect(failedMessages(batch, { batchItemFailures: [{ itemIdentifier: 'm1' }, invalid] })).toEqual(new Set(['m1', 'm2', 'm3']));
});
