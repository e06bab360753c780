// The local run's SQS: the queues of the webhook pipeline with the rules the pipeline relies on,
// reached by the functions through the SDK (AWS_ENDPOINT_URL_SQS, the JSON protocol:
// lib/local/sqs-api.ts) and by the local event source mapping in-process (it stands in for
// Lambda's poller, which is AWS's own). Each rule follows the SQS page it cites:
// - FIFO: messages of one group are received in the order sent, and none of a group while an
//   earlier one of it is in flight; MessageGroupId and (without content-based deduplication)
//   MessageDeduplicationId are required; a deduplication id seen in the last 5 minutes is
//   accepted, answered with the first message's id, and not queued again; DelaySeconds is a queue
//   setting only (a message's own non-zero DelaySeconds is refused; the send's checks are in
//   lib/local/sqs-errors.ts).
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
// - Size: a message body is 1 byte to 1 MiB (1,048,576 bytes), a batch's bodies together at most 1 MiB.
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
// - Visibility: a received message is invisible for the queue's visibility timeout or the
//   receive's VisibilityTimeout; ChangeMessageVisibility sets 0 to 43,200 s from now, refused when
//   that is later than 12 hours after the receive ("greater than the maximum time left"), or when
//   the message is not in flight under that receipt handle. A receipt handle this queue never
//   issued is invalid; an earlier receive's handle deletes nothing (DeleteMessage succeeds).
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
// - ReceiveMessage: 1 to 10 messages; ApproximateReceiveCount counts receives.
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
// - Redrive: a message received maxReceiveCount times and not deleted moves to the dead-letter
//   queue instead of being received again, keeping its enqueue time from a standard queue and
//   starting a new one from a FIFO queue; StartMessageMoveTask moves dead letters back, to their
//   source queues or to its DestinationArn (moveMessages).
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html
//   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
// - Retention: a message enqueued longer ago than the retention period is dropped.
// State is kept in memory and, with a data directory, written to <data>/webhooks/sqs.json (0600,
// in a 0700 directory: the bodies are partners' deliveries) after each change, so queued
// deliveries survive a restart of the local run.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { text } from './aws-json-endpoint.ts';
import { writePrivateFile } from './private-files.ts';
import { checkOutgoing, invalidValue, SQS_ERRORS, type OutgoingMessage } from './sqs-errors.ts';

export const LOCAL_ACCOUNT = '000000000000';
const DEDUPLICATION_MS = 5 * 60_000;
/** The longest visibility timeout, and the longest a message stays in flight from its receive: 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

export interface QueueSettings {
  name: string;
  visibilityTimeoutSeconds: number;
  retentionSeconds: number;
  /** The queue's DelaySeconds (0 to 900); the only delay a FIFO queue has. */
  delaySeconds?: number;
  /** The redrive policy: after this many receives, the message moves to `deadLetterQueue`. */
  redrive?: { deadLetterQueue: string; maxReceiveCount: number };
}

export interface QueuedMessage {
  messageId: string;
  body: string;
  groupId?: string;
  deduplicationId?: string;
  /** SentTimestamp: when it was sent. */
  sentAt: number;
  /** When it entered this queue: retention counts from it. */
  enqueuedAt: number;
  receiveCount: number;
  firstReceivedAt?: number;
  /** The last receive: its time (the 12-hour bound counts from it) and its receipt handle. */
  receivedAt?: number;
  receiptHandle?: string;
  /** Epoch ms when it may be received (again). */
  visibleAt: number;
  /** Where it was first sent (the source of a redrive). */
  sourceQueue: string;
}

interface Queue {
  settings: QueueSettings;
  messages: QueuedMessage[];
  /** Deduplication id -> the message id it was first sent as, and until when it is remembered. */
  deduplication: Map<string, { messageId: string; until: number }>;
}

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: Record<string, string>;
}

const isFifo = (queue: Queue) => queue.settings.name.endsWith('.fifo');

export class LocalSqs {
  private readonly queues = new Map<string, Queue>();
  private readonly stateFile: string | undefined;
  /** Signs receipt handles: a handle this run's queues did not issue is recognised as invalid. */
  private readonly handleKey = randomBytes(32);
  private readonly waiters = new Set<() => void>();
  private saveScheduled = false;
  /** Called when a message becomes receivable (sent, or made visible at once): the poller need not wait. */
  onMessage: () => void = () => undefined;

  constructor(queues: QueueSettings[], stateFile?: string) {
    this.stateFile = stateFile;
    type Saved = Omit<QueuedMessage, 'enqueuedAt'> & Partial<Pick<QueuedMessage, 'enqueuedAt'>>;
    const saved = stateFile && existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, Saved[]>) : {};
    for (const settings of queues) {
      // Files of earlier versions have no enqueuedAt: they were enqueued when sent.
      const messages = (saved[settings.name] ?? []).map((message) => ({ ...message, enqueuedAt: message.enqueuedAt ?? message.sentAt }));
      this.queues.set(settings.name, { settings, messages, deduplication: new Map() });
    }
  }

  queueUrl(endpoint: string, name: string): string {
    return `${endpoint}/${LOCAL_ACCOUNT}/${name}`;
  }

  private queue(nameOrUrl: unknown): Queue {
    const name = text(nameOrUrl).split('/').pop() ?? '';
    const queue = this.queues.get(name);
    if (!queue) throw SQS_ERRORS.QueueDoesNotExist('The specified queue does not exist.');
    return queue;
  }

  private changed(receivable = false): void {
    if (receivable) {
      this.onMessage();
      for (const wake of [...this.waiters]) wake();
    }
    if (!this.stateFile || this.saveScheduled) return;
    this.saveScheduled = true;
    setImmediate(() => {
      this.saveScheduled = false;
      const state = Object.fromEntries([...this.queues].map(([name, queue]) => [name, queue.messages]));
      writePrivateFile(this.stateFile as string, JSON.stringify(state));
    });
  }

  /** Resolves when a message may have become receivable, or after `ms` (long polling). */
  waitForMessage(ms: number): Promise<void> {
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        done();
      };
      const timer = setTimeout(wake, ms);
      timer.unref();
      this.waiters.add(wake);
    });
  }

  send(queueName: string, entry: OutgoingMessage, now = Date.now()): string {
    const queue = this.queue(queueName);
    checkOutgoing(isFifo(queue), entry);
    if (entry.deduplicationId !== undefined && isFifo(queue)) {
      for (const [id, seen] of queue.deduplication) if (seen.until <= now) queue.deduplication.delete(id);
      const seen = queue.deduplication.get(entry.deduplicationId);
      if (seen) return seen.messageId;
    }
    const messageId = randomUUID();
    if (entry.deduplicationId !== undefined && isFifo(queue))
      queue.deduplication.set(entry.deduplicationId, { messageId, until: now + DEDUPLICATION_MS });
    // A FIFO message's DelaySeconds can only be 0 (checkOutgoing), which leaves the queue's.
    const delay = (isFifo(queue) ? undefined : entry.delaySeconds) ?? queue.settings.delaySeconds ?? 0;
    queue.messages.push({
      messageId,
      body: entry.body,
      ...(entry.groupId ? { groupId: entry.groupId } : {}),
      ...(entry.deduplicationId && isFifo(queue) ? { deduplicationId: entry.deduplicationId } : {}),
      sentAt: now,
      enqueuedAt: now,
      receiveCount: 0,
      visibleAt: now + delay * 1000,
      sourceQueue: queue.settings.name,
    });
    this.changed(delay === 0);
    return messageId;
  }

  /** A receipt handle for this receive of `message`, signed so that an invented one is recognised. */
  private receiptHandle(queue: Queue, message: QueuedMessage): string {
    const payload = Buffer.from(JSON.stringify([queue.settings.name, message.messageId, message.receiveCount, randomUUID()])).toString(
      'base64url',
    );
    return `${payload}.${createHmac('sha256', this.handleKey).update(payload).digest('base64url')}`;
  }

  /** True when this queue issued `handle` (to any receive of any message, current or not). */
  private issued(queue: Queue, handle: string): boolean {
    const [payload = '', signature] = handle.split('.');
    if (signature !== createHmac('sha256', this.handleKey).update(payload).digest('base64url')) return false;
    try {
      return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[])[0] === queue.settings.name;
    } catch {
      return false;
    }
  }

  /** Moves a message received maxReceiveCount times to the dead-letter queue; true if it moved. */
  private deadLetter(queue: Queue, message: QueuedMessage, now: number): boolean {
    const redrive = queue.settings.redrive;
    if (!redrive || message.receiveCount < redrive.maxReceiveCount) return false;
    queue.messages.splice(queue.messages.indexOf(message), 1);
    const { receiptHandle: _handle, ...kept } = message;
    // Standard queues keep the enqueue time; "for FIFO queues, the enqueue timestamp resets when
    // the message is moved to a dead-letter queue" (setting-up-dead-letter-queue-retention.html).
    this.queue(redrive.deadLetterQueue).messages.push({ ...kept, visibleAt: now, ...(isFifo(queue) ? { enqueuedAt: now } : {}) });
    return true;
  }

  /**
   * Up to `max` (1 to 10) messages, FIFO groups in order and one group at a time in flight; dead
   * letters are moved on the way. `visibilityTimeoutSeconds` overrides the queue's for this receive.
   */
  receive(queueName: string, max: number, options: { now?: number; visibilityTimeoutSeconds?: number } = {}): ReceivedMessage[] {
    const now = options.now ?? Date.now();
    const queue = this.queue(queueName);
    if (!Number.isInteger(max) || max < 1 || max > 10)
      throw invalidValue('MaxNumberOfMessages', max, 'Must be between 1 and 10, if provided.');
    const visibility = options.visibilityTimeoutSeconds ?? queue.settings.visibilityTimeoutSeconds;
    const stored = queue.messages.length;
    queue.messages = queue.messages.filter((message) => message.enqueuedAt + queue.settings.retentionSeconds * 1000 > now);
    let moved = queue.messages.length !== stored;
    const fifo = isFifo(queue);
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
      if (this.deadLetter(queue, message, now)) {
        moved = true;
        continue;
      }
      message.receiveCount++;
      message.firstReceivedAt ??= now;
      message.receivedAt = now;
      message.receiptHandle = this.receiptHandle(queue, message);
      message.visibleAt = now + visibility * 1000;
      received.push({
        messageId: message.messageId,
        receiptHandle: message.receiptHandle,
        body: message.body,
        attributes: attributes(message),
      });
    }
    if (moved || received.length > 0) this.changed();
    return received;
  }

  /** The message `handle` names while it is in flight under that handle; refusals as ChangeMessageVisibility answers them. */
  private inFlight(queue: Queue, handle: string, now: number): QueuedMessage {
    if (!this.issued(queue, handle)) throw SQS_ERRORS.ReceiptHandleIsInvalid('The input receipt handle is invalid.');
    const message = queue.messages.find((candidate) => candidate.receiptHandle === handle);
    if (!message || message.visibleAt <= now) throw SQS_ERRORS.MessageNotInflight('The message referred to is not in flight.');
    return message;
  }

  changeVisibility(queueName: string, receiptHandle: string, seconds: number, now = Date.now()): void {
    const queue = this.queue(queueName);
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_VISIBILITY_SECONDS)
      throw invalidValue('VisibilityTimeout', seconds, `Must be between 0 and ${MAX_VISIBILITY_SECONDS}.`);
    const message = this.inFlight(queue, receiptHandle, now);
    // "If you attempt to set the VisibilityTimeout to a value greater than the maximum time left,
    // Amazon SQS returns an error" (API_ChangeMessageVisibility): 12 hours from the receive.
    if (now + seconds * 1000 > (message.receivedAt ?? now) + MAX_VISIBILITY_SECONDS * 1000)
      throw invalidValue(
        'VisibilityTimeout',
        seconds,
        `Total VisibilityTimeout for the message is beyond the limit [${MAX_VISIBILITY_SECONDS} seconds].`,
      );
    message.visibleAt = now + seconds * 1000;
    this.changed(seconds === 0);
  }

  /** Deletes the message received with `receiptHandle`; an earlier receive's handle deletes nothing. */
  delete(queueName: string, receiptHandle: string): void {
    const queue = this.queue(queueName);
    if (!this.issued(queue, receiptHandle)) throw SQS_ERRORS.ReceiptHandleIsInvalid('The input receipt handle is invalid.');
    const index = queue.messages.findIndex((candidate) => candidate.receiptHandle === receiptHandle);
    if (index >= 0) queue.messages.splice(index, 1);
    this.changed();
  }

  /**
   * StartMessageMoveTask, done at once: moves the messages of `deadLetterQueue` (a dead-letter queue
   * of another queue, else UnsupportedOperation), oldest first, to `destination` (a queue of the same
   * type) or, without one, each to the queue redrive moved it from. A message sent to the dead-letter
   * queue directly has no such queue: the task fails there (unverified: SQS documents no reason),
   * leaving it and those after it. Moved messages are new: new message id, enqueue time and receive
   * count (sqs-configure-dead-letter-queue-redrive.html). Answers how many moved.
   */
  moveMessages(deadLetterQueue: string, destination?: string, now = Date.now()): number {
    const queue = this.queue(deadLetterQueue);
    if (![...this.queues.values()].some((other) => other.settings.redrive?.deadLetterQueue === queue.settings.name))
      throw SQS_ERRORS.UnsupportedOperation('Source queue must be configured as a Dead Letter Queue.');
    const target = destination === undefined ? undefined : this.queues.get(destination);
    if (destination !== undefined && !target)
      throw SQS_ERRORS.ResourceNotFoundException('The resource that you specified for the DestinationArn parameter does not exist.');
    if (target && isFifo(target) !== isFifo(queue))
      throw invalidValue('DestinationArn', destination, 'The destination queue must be of the same type as the source queue.');
    let moved = 0;
    for (const message of [...queue.messages]) {
      const to = target ?? (message.sourceQueue === queue.settings.name ? undefined : this.queue(message.sourceQueue));
      if (!to) break;
      queue.messages.splice(queue.messages.indexOf(message), 1);
      const { receiptHandle: _handle, receivedAt: _received, firstReceivedAt: _first, ...kept } = message;
      to.messages.push({ ...kept, messageId: randomUUID(), enqueuedAt: now, receiveCount: 0, visibleAt: now });
      moved++;
    }
    this.changed(moved > 0);
    return moved;
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
}

/** The message's system attributes, as a receive asking for All gets them. */
function attributes(message: QueuedMessage): Record<string, string> {
  return {
    ApproximateReceiveCount: String(message.receiveCount),
    SentTimestamp: String(message.sentAt),
    ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.receivedAt),
    SenderId: LOCAL_ACCOUNT,
    ...(message.groupId !== undefined ? { MessageGroupId: message.groupId } : {}),
    ...(message.deduplicationId !== undefined ? { MessageDeduplicationId: message.deduplicationId } : {}),
  };
}
