// The local SQS stand-in's redrive, spoken to with the AWS SDK as the webhook functions and an
// operator speak to SQS: a message received maxReceiveCount times without being deleted moves to
// the dead-letter queue, and StartMessageMoveTask sends it back to its source queue
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html,
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html).
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { AwsJsonEndpoint } from '../../lib/local/aws-json-endpoint.ts';
import { LOCAL_ACCOUNT, LocalSqs } from '../../lib/local/sqs-stand-in.ts';

const SOURCE = 'deliveries.fifo';
const DEAD_LETTERS = 'deliveries-dead-letters.fifo';

let sqs: LocalSqs;
let endpoint: AwsJsonEndpoint;
let client: SQSClient;

beforeAll(async () => {
  sqs = new LocalSqs([
    { name: SOURCE, visibilityTimeoutSeconds: 30, retentionSeconds: 3600, redrive: { deadLetterQueue: DEAD_LETTERS, maxReceiveCount: 2 } },
    { name: DEAD_LETTERS, visibilityTimeoutSeconds: 30, retentionSeconds: 3600 },
  ]);
  endpoint = await sqs.serve();
  client = new SQSClient({ endpoint: endpoint.url, region: 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});

afterAll(async () => {
  client.destroy();
  await endpoint.close();
});

/** Receives from `queue` and makes what it got visible again at once (a failed attempt), returning the bodies. */
async function receiveAndFail(queue: string): Promise<string[]> {
  const url = sqs.queueUrl(endpoint.url, queue);
  const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
  for (const message of Messages) {
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }));
  }
  return Messages.map((message) => message.Body ?? '');
}

test('a message received maxReceiveCount times moves to the dead-letter queue, and StartMessageMoveTask sends it back', async () => {
  const source = sqs.queueUrl(endpoint.url, SOURCE);
  await client.send(
    new SendMessageCommand({ QueueUrl: source, MessageBody: 'change-1', MessageGroupId: 'g', MessageDeduplicationId: 'd1' }),
  );

  expect(await receiveAndFail(SOURCE)).toEqual(['change-1']);
  expect(await receiveAndFail(SOURCE)).toEqual(['change-1']);
  // A third receive would pass maxReceiveCount: the message goes to the dead-letter queue instead.
  expect(await receiveAndFail(SOURCE)).toEqual([]);
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(1);

  await client.send(new StartMessageMoveTaskCommand({ SourceArn: `arn:aws:sqs:eu-west-1:${LOCAL_ACCOUNT}:${DEAD_LETTERS}` }));
  expect(sqs.counts(DEAD_LETTERS).visible).toBe(0);
  // Back in its source queue with its receive count reset: it can be delivered again.
  expect(await receiveAndFail(SOURCE)).toEqual(['change-1']);
});
