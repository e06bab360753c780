// Lambda's SQS event source mapping with ReportBatchItemFailures: which messages of a batch stay
// in the queue after the function answered (the mapping deletes the others). "Lambda treats a
// batch as a complete success" for an absent or null answer and an empty or null
// `batchItemFailures`; it "treats a batch as a complete failure" for an invalid answer, and for an
// item failure whose `itemIdentifier` is an empty string, null, under another key name, or a
// message id that is not in the batch: then no message is deleted.
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
import type { ReceivedMessage } from './sqs-stand-in.ts';

/** The message ids of `batch` to keep in the queue (not delete) after the function's `answer`. */
export function messagesToKeep(batch: readonly Pick<ReceivedMessage, 'messageId'>[], answer: unknown): ReadonlySet<string> {
  const everything = new Set(batch.map((message) => message.messageId));
  if (answer === undefined || answer === null) return new Set();
  if (typeof answer !== 'object' || Array.isArray(answer)) return everything;
  const failures = (answer as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return everything;
  const keep = new Set<string>();
  for (const failure of failures as unknown[]) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof identifier !== 'string' || !everything.has(identifier)) return everything;
    keep.add(identifier);
  }
  return keep;
}
