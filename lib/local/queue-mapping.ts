// The local run's SQS event source mapping (Lambda's poller, which is AWS's own): it receives
// batches from a FIFO queue of the SQS stand-in, invokes the function through the local Lambda
// runtime, and deletes the messages the answer does not report failed.
// - Scaling: for a FIFO queue, "concurrent invocations are capped either by the number of message
//   group IDs or the maximum concurrency setting, whichever is lower" (services-sqs-scaling.html).
//   The mapping keeps receiving while fewer than `maximumConcurrency` invocations are under way; the
//   stand-in hands out no message of a group with one in flight, so the invocations are as many as
//   the groups with a message ready, up to the maximum. Lambda documents no ramp-up for FIFO queues;
//   none is modelled.
// - Partial batch responses: what stays in the queue is messagesToKeep (sqs-partial-batch.ts): an
//   invalid answer or item failure keeps the whole batch (services-sqs-errorhandling.html); so does
//   a function error, and the batch returns after its visibility timeout.
// - Stopping (the local run's own event, which has no AWS counterpart): no batch is taken any more,
//   invocations under way may finish for `stopWaitMs` (an attempt is bounded at 10 s), and the
//   messages of any still running are made visible again at once (ChangeMessageVisibility 0), so a
//   restart delivers them without waiting out the visibility timeout.
// https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
import { messagesToKeep } from './sqs-partial-batch.ts';
import type { LocalSqs, ReceivedMessage } from './sqs-stand-in.ts';

export interface QueueMappingOptions {
  sqs: LocalSqs;
  queueName: string;
  /** The queue's ARN, as Lambda names it in each record's eventSourceARN. */
  queueArn: string;
  region: string;
  account: string;
  batchSize: number;
  maximumConcurrency: number;
  invoke: (event: unknown) => Promise<unknown>;
  /** How long a stop lets invocations under way finish before returning their messages. */
  stopWaitMs: number;
  log: (line: string) => void;
}

export interface QueueMapping {
  /** Takes no more batches; resolves once every invocation has finished or had its messages returned. */
  stop(): Promise<void>;
}

export function startQueueMapping(options: QueueMappingOptions): QueueMapping {
  const { sqs, queueName } = options;
  const running = new Map<Promise<void>, ReceivedMessage[]>();
  let stopping = false;
  /** Wakes the poller: a message was sent or made visible, an invocation ended, or the run stops. */
  let wake: () => void = () => undefined;
  sqs.onMessage = () => wake();

  const lambdaEvent = (messages: readonly ReceivedMessage[]) => ({
    Records: messages.map((message) => ({
      messageId: message.messageId,
      receiptHandle: message.receiptHandle,
      body: message.body,
      attributes: { ...message.attributes, SenderId: options.account, MessageDeduplicationId: '' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: options.queueArn,
      awsRegion: options.region,
    })),
  });

  async function invokeBatch(messages: ReceivedMessage[]): Promise<void> {
    try {
      const kept = messagesToKeep(messages, await options.invoke(lambdaEvent(messages)));
      for (const message of messages) if (!kept.has(message.messageId)) sqs.delete(queueName, message.receiptHandle);
    } catch (error) {
      // A function error: the whole batch returns after its visibility timeout.
      if (!stopping) options.log(`webhooks: the delivery function failed (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  function pause(): Promise<void> {
    const nextAt = sqs.nextVisibleAt(queueName);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake(), Math.min(1000, Math.max(20, (nextAt ?? Infinity) - Date.now())));
      wake = () => {
        clearTimeout(timer);
        wake = () => undefined;
        resolve();
      };
    });
  }

  async function poll(): Promise<void> {
    while (!stopping) {
      const messages = running.size < options.maximumConcurrency ? sqs.receive(queueName, options.batchSize) : [];
      if (messages.length === 0) {
        await pause();
        continue;
      }
      const invocation: Promise<void> = invokeBatch(messages).finally(() => {
        running.delete(invocation);
        wake();
      });
      running.set(invocation, messages);
    }
  }

  const poller = poll();
  return {
    async stop() {
      stopping = true;
      wake();
      await poller;
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.stopWaitMs)));
      await Promise.race([Promise.allSettled([...running.keys()]), waited]);
      clearTimeout(timer);
      const unfinished = [...running.values()].flat();
      for (const message of unfinished) {
        try {
          sqs.changeVisibility(queueName, message.receiptHandle, 0);
        } catch {
          // Deleted or returned by its invocation meanwhile: nothing to return.
        }
      }
      if (unfinished.length > 0)
        options.log(`webhooks: ${unfinished.length} delivery(ies) still under way at the stop were made visible again`);
    },
  };
}
