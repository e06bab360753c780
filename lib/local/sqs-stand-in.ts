// The local run's SQS: the queues of the webhook pipeline with the behaviour the pipeline relies
// on, reached by the functions through the SDK (AWS_ENDPOINT_URL_SQS, the JSON protocol) and by the
// local event source mapping in-process (it stands in for Lambda's poller, which is AWS's own).
// - FIFO: messages of one group are received in the order sent, and none of a group while an
//   earlier one of it is in flight; a deduplication id seen in the last 5 minutes is accepted
//   but not queued again.
// - Visibility: a received message is invisible for the queue's visibility timeout, or what
//   ChangeMessageVisibility sets (0 to 43,200 s); ApproximateReceiveCount counts receives.
// - Redrive: a message received maxReceiveCount times and not deleted moves to the dead-letter
//   queue instead of being received again; StartMessageMoveTask moves dead letters back.
// - Retention: a message older than the retention period is dropped.
// State is kept in memory and, with a data directory, written to <data>/webhooks/sqs.json after
// each change, so queued deliveries survive a restart of the local run.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AwsJsonError, startAwsJsonEndpoint, text, type AwsJsonEndpoint } from './aws-json-endpoint.ts';

export const LOCAL_ACCOUNT = '000000000000';
const DEDUPLICATION_MS = 5 * 60_000;
const MAX_VISIBILITY_SECONDS = 43_200;

export interface QueueSettings {
  name: string;
  visibilityTimeoutSeconds: number;
  retentionSeconds: number;
  /** The redrive policy: after this many receives, the message moves to `deadLetterQueue`. */
  redrive?: { deadLetterQueue: string; maxReceiveCount: number };
}

export interface QueuedMessage {
  messageId: string;
  body: string;
  groupId?: string;
  sentAt: number;
  receiveCount: number;
  /** Epoch ms when it may be received (again). */
  visibleAt: number;
  receiptHandle?: string;
  /** Where it was first sent (the source of a redrive). */
  sourceQueue: string;
}

interface Queue {
  settings: QueueSettings;
  messages: QueuedMessage[];
  deduplication: Map<string, number>;
}

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount: string; SentTimestamp: string; MessageGroupId?: string; ApproximateFirstReceiveTimestamp: string };
}

export class LocalSqs {
  private readonly queues = new Map<string, Queue>();
  private readonly stateFile: string | undefined;
  private saveScheduled = false;
  /** Called when a message becomes receivable (sent, or made visible at once): the poller need not wait. */
  onMessage: () => void = () => undefined;

  constructor(queues: QueueSettings[], stateFile?: string) {
    this.stateFile = stateFile;
    const saved =
      stateFile && existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, QueuedMessage[]>) : {};
    for (const settings of queues)
      this.queues.set(settings.name, { settings, messages: saved[settings.name] ?? [], deduplication: new Map() });
  }

  queueUrl(endpoint: string, name: string): string {
    return `${endpoint}/${LOCAL_ACCOUNT}/${name}`;
  }

  private queue(nameOrUrl: unknown): Queue {
    const name = text(nameOrUrl).split('/').pop() ?? '';
    const queue = this.queues.get(name);
    if (!queue) throw new AwsJsonError('AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.');
    return queue;
  }

  private save(): void {
    if (!this.stateFile || this.saveScheduled) return;
    this.saveScheduled = true;
    setImmediate(() => {
      this.saveScheduled = false;
      const file = this.stateFile as string;
      mkdirSync(dirname(file), { recursive: true });
      const state = Object.fromEntries([...this.queues].map(([name, queue]) => [name, queue.messages]));
      writeFileSync(`${file}.tmp`, JSON.stringify(state));
      renameSync(`${file}.tmp`, file);
    });
  }

  send(queueName: string, entry: { body: string; groupId?: string; deduplicationId?: string }, now = Date.now()): string {
    const queue = this.queue(queueName);
    const fifo = queue.settings.name.endsWith('.fifo');
    if (fifo && !entry.groupId) throw new AwsJsonError('MissingParameter', 'The request must contain the parameter MessageGroupId.');
    if (fifo) {
      // Content-based deduplication is not enabled on these queues: the id is required.
      if (!entry.deduplicationId)
        throw new AwsJsonError(
          'InvalidParameterValue',
          'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
        );
      for (const [id, until] of queue.deduplication) if (until <= now) queue.deduplication.delete(id);
      const seen = queue.deduplication.has(entry.deduplicationId);
      if (seen) return createHash('sha256').update(entry.deduplicationId).digest('hex').slice(0, 32);
      queue.deduplication.set(entry.deduplicationId, now + DEDUPLICATION_MS);
    }
    const messageId = randomUUID();
    queue.messages.push({
      messageId,
      body: entry.body,
      ...(entry.groupId ? { groupId: entry.groupId } : {}),
      sentAt: now,
      receiveCount: 0,
      visibleAt: now,
      sourceQueue: queue.settings.name,
    });
    this.save();
    this.onMessage();
    return messageId;
  }

  /** Up to `max` messages, FIFO groups in order and one group at a time in flight; dead letters are moved on the way. */
  receive(queueName: string, max: number, now = Date.now()): ReceivedMessage[] {
    const queue = this.queue(queueName);
    queue.messages = queue.messages.filter((message) => message.sentAt + queue.settings.retentionSeconds * 1000 > now);
    const fifo = queue.settings.name.endsWith('.fifo');
    const lockedGroups = new Set<string>();
    const received: ReceivedMessage[] = [];
    for (const message of [...queue.messages]) {
      if (received.length >= max) break;
      const group = message.groupId;
      if (fifo && group !== undefined && lockedGroups.has(group)) continue;
      if (message.visibleAt > now) {
        if (fifo && group !== undefined) lockedGroups.add(group);
        continue;
      }
      const redrive = queue.settings.redrive;
      if (redrive && message.receiveCount >= redrive.maxReceiveCount) {
        // "If the source queue ... the message is moved to the dead-letter queue" when it would be received beyond the count.
        queue.messages.splice(queue.messages.indexOf(message), 1);
        const { receiptHandle: _handle, ...kept } = message;
        this.queue(redrive.deadLetterQueue).messages.push({ ...kept, visibleAt: now });
        continue;
      }
      message.receiveCount++;
      message.receiptHandle = randomBytes(24).toString('base64url');
      message.visibleAt = now + queue.settings.visibilityTimeoutSeconds * 1000;
      received.push({
        messageId: message.messageId,
        receiptHandle: message.receiptHandle,
        body: message.body,
        attributes: {
          ApproximateReceiveCount: String(message.receiveCount),
          SentTimestamp: String(message.sentAt),
          ApproximateFirstReceiveTimestamp: String(now),
          ...(group !== undefined ? { MessageGroupId: group } : {}),
        },
      });
    }
    if (received.length > 0) this.save();
    return received;
  }

  private byHandle(queue: Queue, receiptHandle: unknown): QueuedMessage {
    const message = queue.messages.find((candidate) => candidate.receiptHandle === receiptHandle);
    if (!message) throw new AwsJsonError('ReceiptHandleIsInvalid', 'The input receipt handle is invalid.');
    return message;
  }

  changeVisibility(queueName: string, receiptHandle: string, seconds: number, now = Date.now()): void {
    const queue = this.queue(queueName);
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_VISIBILITY_SECONDS) {
      throw new AwsJsonError(
        'InvalidParameterValue',
        `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.`,
      );
    }
    const message = this.byHandle(queue, receiptHandle);
    if (message.visibleAt <= now) throw new AwsJsonError('MessageNotInflight', 'The message is not in flight.');
    message.visibleAt = now + seconds * 1000;
    this.save();
    if (seconds === 0) this.onMessage();
  }

  delete(queueName: string, receiptHandle: string): void {
    const queue = this.queue(queueName);
    const index = queue.messages.findIndex((candidate) => candidate.receiptHandle === receiptHandle);
    if (index >= 0) queue.messages.splice(index, 1);
    this.save();
  }

  /** Moves every message of a dead-letter queue back to the queue it came from (StartMessageMoveTask without a destination). */
  redrive(deadLetterQueue: string, now = Date.now()): number {
    const queue = this.queue(deadLetterQueue);
    const moved = queue.messages.splice(0);
    for (const message of moved) {
      const { receiptHandle: _handle, ...kept } = message;
      this.queue(message.sourceQueue).messages.push({ ...kept, receiveCount: 0, visibleAt: now });
    }
    this.save();
    this.onMessage();
    return moved.length;
  }

  /** ApproximateNumberOfMessages (visible) and ...NotVisible (in flight or delayed). */
  counts(queueName: string, now = Date.now()): { visible: number; notVisible: number } {
    const queue = this.queue(queueName);
    const visible = queue.messages.filter((message) => message.visibleAt <= now).length;
    return { visible, notVisible: queue.messages.length - visible };
  }

  /** The earliest time a message of `queueName` becomes visible, if any is invisible now. */
  nextVisibleAt(queueName: string, now = Date.now()): number | undefined {
    const times = this.queue(queueName)
      .messages.filter((message) => message.visibleAt > now)
      .map((message) => message.visibleAt);
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /** The SDK's JSON protocol over HTTP, for the functions. */
  serve(): Promise<AwsJsonEndpoint> {
    const fail = (error: unknown) => {
      const known = error instanceof AwsJsonError ? error : new AwsJsonError('InternalError', (error as Error).message);
      return { SenderFault: true, Code: known.type, Message: known.message };
    };
    return startAwsJsonEndpoint('application/x-amz-json-1.0', {
      SendMessage: (input) => ({
        MessageId: this.send(text(input.QueueUrl), {
          body: text(input.MessageBody),
          ...(input.MessageGroupId ? { groupId: text(input.MessageGroupId) } : {}),
          ...(input.MessageDeduplicationId ? { deduplicationId: text(input.MessageDeduplicationId) } : {}),
        }),
        // The SDK checks it against the body it sent (as for SendMessageBatch below).
        MD5OfMessageBody: createHash('md5').update(text(input.MessageBody)).digest('hex'),
      }),
      SendMessageBatch: (input) => {
        const entries = input.Entries as { Id: string; MessageBody: string; MessageGroupId?: string; MessageDeduplicationId?: string }[];
        if (entries.length === 0 || entries.length > 10)
          throw new AwsJsonError('AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 'A batch holds 1 to 10 entries.');
        const Successful: unknown[] = [];
        const Failed: unknown[] = [];
        for (const entry of entries) {
          try {
            const MessageId = this.send(text(input.QueueUrl), {
              body: entry.MessageBody,
              ...(entry.MessageGroupId ? { groupId: entry.MessageGroupId } : {}),
              ...(entry.MessageDeduplicationId ? { deduplicationId: entry.MessageDeduplicationId } : {}),
            });
            Successful.push({ Id: entry.Id, MessageId, MD5OfMessageBody: createHash('md5').update(entry.MessageBody).digest('hex') });
          } catch (error) {
            Failed.push({ Id: entry.Id, ...fail(error) });
          }
        }
        return { Successful, Failed };
      },
      ReceiveMessage: (input) => ({
        Messages: this.receive(text(input.QueueUrl), Number(input.MaxNumberOfMessages ?? 1)).map((message) => ({
          MessageId: message.messageId,
          ReceiptHandle: message.receiptHandle,
          Body: message.body,
          MD5OfBody: createHash('md5').update(message.body).digest('hex'),
          Attributes: message.attributes,
        })),
      }),
      DeleteMessage: (input) => {
        this.delete(text(input.QueueUrl), text(input.ReceiptHandle));
        return {};
      },
      ChangeMessageVisibility: (input) => {
        this.changeVisibility(text(input.QueueUrl), text(input.ReceiptHandle), Number(input.VisibilityTimeout));
        return {};
      },
      ChangeMessageVisibilityBatch: (input) => {
        const Successful: unknown[] = [];
        const Failed: unknown[] = [];
        for (const entry of input.Entries as { Id: string; ReceiptHandle: string; VisibilityTimeout: number }[]) {
          try {
            this.changeVisibility(text(input.QueueUrl), entry.ReceiptHandle, entry.VisibilityTimeout);
            Successful.push({ Id: entry.Id });
          } catch (error) {
            Failed.push({ Id: entry.Id, ...fail(error) });
          }
        }
        return { Successful, Failed };
      },
      GetQueueAttributes: (input) => {
        const { visible, notVisible } = this.counts(text(input.QueueUrl));
        return { Attributes: { ApproximateNumberOfMessages: String(visible), ApproximateNumberOfMessagesNotVisible: String(notVisible) } };
      },
      StartMessageMoveTask: (input) => {
        const source = text(input.SourceArn).split(':').pop() ?? '';
        this.redrive(source);
        return { TaskHandle: randomUUID() };
      },
    });
  }
}
