// The SQS stand-in's API (lib/local/sqs-stand-in.ts) over the SDK's JSON protocol, for the
// functions and for an operator's or a test's SDK client: the actions the pipeline uses, with the
// parameters, limits and errors the API reference gives them.
// - Only the run's access key id is answered: an unsigned request is 403 MissingAuthenticationToken,
//   another key id 403 InvalidClientTokenId (Common Errors).
// - A request body is bounded: a batch's bodies are at most 1 MiB together, which JSON's escapes
//   (two bytes at most for a character SQS accepts) can at most double, plus 64 KiB for the other
//   members; a larger request is refused (413) before it is read.
// - ReceiveMessage: MaxNumberOfMessages 1 to 10, VisibilityTimeout 0 to 43,200 s for this receive,
//   WaitTimeSeconds 0 to 20 (long polling: the answer waits for a message until then); attributes
//   only as asked for (MessageSystemAttributeNames, or the older AttributeNames).
// - Batches hold 1 to 10 entries with distinct ids; an entry's refusal is its own (Failed), the
//   batch's (too many entries, bodies over 1 MiB together) refuses the whole request.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibilityBatch.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
import { createHash, randomUUID } from 'node:crypto';
import { AwsJsonError, startAwsJsonEndpoint, text, type AwsJsonEndpoint } from './aws-json-endpoint.ts';
import { invalidValue, MAX_MESSAGE_BYTES, SQS_ERRORS, type OutgoingMessage } from './sqs-errors.ts';
import { MAX_VISIBILITY_SECONDS, type LocalSqs, type ReceivedMessage } from './sqs-stand-in.ts';

/** The MD5 of a body, as SQS answers it and the SDK checks it. */
function md5(body: string): string {
  return createHash('md5').update(body).digest('hex');
}

const MAX_BATCH_ENTRIES = 10;
const MAX_WAIT_SECONDS = 20;
export const MAX_SQS_REQUEST_BYTES = 2 * MAX_MESSAGE_BYTES + 64 * 1024;

/** A required member, or SQS's MissingParameter. */
function required(input: Record<string, unknown>, name: string): unknown {
  if (input[name] === undefined || input[name] === null)
    throw SQS_ERRORS.MissingParameter(`The request must contain the parameter ${name}.`);
  return input[name];
}

/** An optional whole-number member within bounds, or SQS's InvalidParameterValue. */
function wholeNumber(input: Record<string, unknown>, name: string, minimum: number, maximum: number, reason: string): number | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) throw invalidValue(name, value, reason);
  return value;
}

function outgoing(entry: Record<string, unknown>): OutgoingMessage {
  const delaySeconds = entry.DelaySeconds;
  return {
    body: text(required(entry, 'MessageBody')),
    ...(entry.MessageGroupId !== undefined ? { groupId: text(entry.MessageGroupId) } : {}),
    ...(entry.MessageDeduplicationId !== undefined ? { deduplicationId: text(entry.MessageDeduplicationId) } : {}),
    ...(typeof delaySeconds === 'number' ? { delaySeconds } : {}),
  };
}

/** A batch's entries: 1 to 10, with distinct ids. */
function batchEntries(input: Record<string, unknown>): Record<string, unknown>[] {
  const entries = Array.isArray(input.Entries) ? (input.Entries as Record<string, unknown>[]) : [];
  if (entries.length === 0) throw SQS_ERRORS.EmptyBatchRequest('There should be at least one entry in the request.');
  if (entries.length > MAX_BATCH_ENTRIES)
    throw SQS_ERRORS.TooManyEntriesInBatchRequest(
      `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}. You have sent ${entries.length}.`,
    );
  const ids = entries.map((entry) => text(entry.Id));
  if (new Set(ids).size !== ids.length)
    throw SQS_ERRORS.BatchEntryIdsNotDistinct('Two or more batch entries in the request have the same Id.');
  return entries;
}

/** Runs `each` for every entry: what it answers is Successful, what it refuses is Failed. */
function perEntry(entries: Record<string, unknown>[], each: (entry: Record<string, unknown>) => Record<string, unknown>) {
  const Successful: unknown[] = [];
  const Failed: unknown[] = [];
  for (const entry of entries) {
    try {
      Successful.push({ Id: entry.Id, ...each(entry) });
    } catch (error) {
      if (!(error instanceof AwsJsonError)) throw error;
      Failed.push({ Id: entry.Id, SenderFault: true, Code: error.queryCode ?? error.type, Message: error.message });
    }
  }
  return { Successful, Failed };
}

/** A received message as ReceiveMessage answers it, with the attributes asked for. */
function answered(message: ReceivedMessage, names: readonly string[]): Record<string, unknown> {
  const wanted = Object.entries(message.attributes).filter(([name]) => names.includes('All') || names.includes(name));
  return {
    MessageId: message.messageId,
    ReceiptHandle: message.receiptHandle,
    Body: message.body,
    MD5OfBody: md5(message.body),
    ...(wanted.length > 0 ? { Attributes: Object.fromEntries(wanted) } : {}),
  };
}

async function receiveMessage(sqs: LocalSqs, input: Record<string, unknown>): Promise<unknown> {
  const queueUrl = required(input, 'QueueUrl');
  const max = wholeNumber(input, 'MaxNumberOfMessages', 1, MAX_BATCH_ENTRIES, 'Must be between 1 and 10, if provided.') ?? 1;
  const visibility = wholeNumber(input, 'VisibilityTimeout', 0, MAX_VISIBILITY_SECONDS, `Must be between 0 and ${MAX_VISIBILITY_SECONDS}.`);
  const wait = wholeNumber(input, 'WaitTimeSeconds', 0, MAX_WAIT_SECONDS, 'Must be >= 0 and <= 20, if provided.') ?? 0;
  const names = [input.AttributeNames, input.MessageSystemAttributeNames].flatMap((list) =>
    Array.isArray(list) ? (list as string[]) : [],
  );
  const deadline = Date.now() + wait * 1000;
  for (;;) {
    const messages = sqs.receive(text(queueUrl), max, visibility === undefined ? {} : { visibilityTimeoutSeconds: visibility });
    if (messages.length > 0) return { Messages: messages.map((message) => answered(message, names)) };
    const now = Date.now();
    if (now >= deadline) return {};
    await sqs.waitForMessage(Math.min(deadline, sqs.nextVisibleAt(text(queueUrl), now) ?? deadline) - now);
  }
}

function sendMessageBatch(sqs: LocalSqs, input: Record<string, unknown>): unknown {
  const queueUrl = text(required(input, 'QueueUrl'));
  const entries = batchEntries(input);
  const bytes = entries.reduce((sum, entry) => sum + Buffer.byteLength(text(entry.MessageBody)), 0);
  if (bytes > MAX_MESSAGE_BYTES)
    throw SQS_ERRORS.BatchRequestTooLong(`Batch requests cannot be longer than ${MAX_MESSAGE_BYTES} bytes. You have sent ${bytes} bytes.`);
  return perEntry(entries, (entry) => {
    const message = outgoing(entry);
    return { MessageId: sqs.send(queueUrl, message), MD5OfMessageBody: md5(message.body) };
  });
}

/** Serves `sqs` on 127.0.0.1 to requests signed with `accessKeyId`. */
export function serveSqs(sqs: LocalSqs, options: { accessKeyId: string; port?: number }): Promise<AwsJsonEndpoint> {
  return startAwsJsonEndpoint({
    name: 'SQS',
    contentType: 'application/x-amz-json-1.0',
    accessKeyId: options.accessKeyId,
    ...(options.port ? { port: options.port } : {}),
    maxRequestBytes: MAX_SQS_REQUEST_BYTES,
    unsigned: () =>
      SQS_ERRORS.MissingAuthenticationToken('The request must contain either a valid (registered) AWS access key ID or X.509 certificate.'),
    foreignKey: () => SQS_ERRORS.InvalidClientTokenId('The security token included in the request is invalid.'),
    operations: {
      SendMessage: (input) => {
        const message = outgoing(input);
        return { MessageId: sqs.send(text(required(input, 'QueueUrl')), message), MD5OfMessageBody: md5(message.body) };
      },
      SendMessageBatch: (input) => sendMessageBatch(sqs, input),
      ReceiveMessage: (input) => receiveMessage(sqs, input),
      DeleteMessage: (input) => {
        sqs.delete(text(required(input, 'QueueUrl')), text(required(input, 'ReceiptHandle')));
        return {};
      },
      ChangeMessageVisibility: (input) => {
        const seconds = required(input, 'VisibilityTimeout');
        sqs.changeVisibility(text(required(input, 'QueueUrl')), text(required(input, 'ReceiptHandle')), Number(seconds));
        return {};
      },
      ChangeMessageVisibilityBatch: (input) => {
        const queueUrl = text(required(input, 'QueueUrl'));
        return perEntry(batchEntries(input), (entry) => {
          sqs.changeVisibility(queueUrl, text(required(entry, 'ReceiptHandle')), Number(required(entry, 'VisibilityTimeout')));
          return {};
        });
      },
      GetQueueAttributes: (input) => {
        const { visible, notVisible } = sqs.counts(text(required(input, 'QueueUrl')));
        return { Attributes: { ApproximateNumberOfMessages: String(visible), ApproximateNumberOfMessagesNotVisible: String(notVisible) } };
      },
      StartMessageMoveTask: (input) => {
        const queueName = (arn: unknown) => text(arn).split(':').pop() ?? '';
        const destination = input.DestinationArn === undefined ? undefined : queueName(input.DestinationArn);
        sqs.moveMessages(queueName(required(input, 'SourceArn')), destination);
        return { TaskHandle: randomUUID() };
      },
    },
  });
}
