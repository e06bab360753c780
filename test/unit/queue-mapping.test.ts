// The local SQS event source mapping on the SQS stand-in, in process, with a function that the
// test holds or lets go: it runs one invocation per message group ready, up to the maximum
// concurrency (services-sqs-scaling.html), and a stop returns the messages of invocations still
// running at once (ChangeMessageVisibility 0).
import { startQueueMapping } from '../../lib/local/queue-mapping.ts';
import { LocalSqs } from '../../lib/local/sqs-stand-in.ts';

const QUEUE = 'deliveries.fifo';

function setUp(maximumConcurrency: number, groups: string[], batchSize = 1) {
  const sqs = new LocalSqs([{ name: QUEUE, visibilityTimeoutSeconds: 360, retentionSeconds: 3600 }]);
  for (const [index, group] of groups.entries()) sqs.send(QUEUE, { body: `m${index}`, groupId: group, deduplicationId: `d${index}` });
  const running: { resolve: (answer: unknown) => void; bodies: string[]; ids: string[] }[] = [];
  const mapping = startQueueMapping({
    sqs,
    queueName: QUEUE,
    queueArn: `arn:aws:sqs:local:000000000000:${QUEUE}`,
    region: 'local',
    account: '000000000000',
    batchSize,
    maximumConcurrency,
    // Held until the test lets it go: as a delivery to a receiver that does not answer.
    invoke: (event) =>
      new Promise((resolve) => {
        const records =
          typeof event === 'object' && event !== null && 'Records' in event && Array.isArray(event.Records) ? event.Records : [];
        running.push({
          resolve,
          bodies: records.map((record: { body: string }) => record.body),
          ids: records.map((record: { messageId: string }) => record.messageId),
        });
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

test('the mapping deletes what messagesToKeep does not keep: an invalid item failure keeps the whole batch', async () => {
  // The rule itself (sqs-partial-batch.ts) is tested in sqs-stand-in.test.ts; here, that the mapping applies it.
  const afterVisibilityTimeout = () => Date.now() + 361_000;
  for (const [answer, kept] of [
    [(second: string) => ({ batchItemFailures: [{ itemIdentifier: second }] }), ['m1']],
    [(second: string) => ({ batchItemFailures: [{ itemIdentifier: second }, { itemIdentifier: '' }] }), ['m0', 'm1']],
  ] as const) {
    const { sqs, running, mapping } = setUp(1, ['a', 'a'], 2);
    await settle();
    expect(running.map((invocation) => invocation.bodies)).toEqual([['m0', 'm1']]);
    running[0]?.resolve(answer(running[0].ids[1] ?? ''));
    await settle();
    await mapping.stop();
    expect(sqs.receive(QUEUE, 10, { now: afterVisibilityTimeout() }).map((message) => message.body)).toEqual(kept);
  }
});
