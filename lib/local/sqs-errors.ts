// SQS's errors as the local SQS stand-in answers them (lib/local/sqs-stand-in.ts, sqs-api.ts), and
// the refusals of a message to send (API_SendMessage, quotas-messages): a body of 1 byte to 1 MiB,
// DelaySeconds 0 to 900 and, on a FIFO queue, only 0 ("When you set FifoQueue, you can't set
// DelaySeconds per message"; 0 is accepted), MessageGroupId and MessageDeduplicationId required.
// Errors carry the SDK's error name (`__type`, namespaced for the errors SQS's model defines), the query-protocol
// code SQS sends in `x-amzn-query-error` (AWS query compatibility) and the HTTP status, as the
// actions' pages and Common Errors list them.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
import { AwsJsonError } from './aws-json-endpoint.ts';

function sqsError(name: string, queryCode: string, status: number, modelled = true): (message: string) => AwsJsonError {
  return (message) => new AwsJsonError(modelled ? `com.amazonaws.sqs#${name}` : name, message, status, queryCode);
}
export const SQS_ERRORS = {
  QueueDoesNotExist: sqsError('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', 400),
  ReceiptHandleIsInvalid: sqsError('ReceiptHandleIsInvalid', 'ReceiptHandleIsInvalid', 404),
  MessageNotInflight: sqsError('MessageNotInflight', 'AWS.SimpleQueueService.MessageNotInflight', 400),
  EmptyBatchRequest: sqsError('EmptyBatchRequest', 'AWS.SimpleQueueService.EmptyBatchRequest', 400),
  TooManyEntriesInBatchRequest: sqsError('TooManyEntriesInBatchRequest', 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest', 400),
  BatchEntryIdsNotDistinct: sqsError('BatchEntryIdsNotDistinct', 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct', 400),
  BatchRequestTooLong: sqsError('BatchRequestTooLong', 'AWS.SimpleQueueService.BatchRequestTooLong', 400),
  UnsupportedOperation: sqsError('UnsupportedOperation', 'AWS.SimpleQueueService.UnsupportedOperation', 400),
  ResourceNotFoundException: sqsError('ResourceNotFoundException', 'ResourceNotFoundException', 400),
  InvalidParameterValue: sqsError('InvalidParameterValue', 'InvalidParameterValue', 400, false),
  MissingParameter: sqsError('MissingParameter', 'MissingParameter', 400, false),
  InvalidClientTokenId: sqsError('InvalidClientTokenId', 'InvalidClientTokenId', 403, false),
  MissingAuthenticationToken: sqsError('MissingAuthenticationToken', 'MissingAuthenticationToken', 403, false),
};

/** SQS's refusal of a parameter value, in its words. */
export function invalidValue(parameter: string, value: unknown, reason: string): AwsJsonError {
  return SQS_ERRORS.InvalidParameterValue(`Value ${String(value)} for parameter ${parameter} is invalid. Reason: ${reason}`);
}

/** The largest message body, and the largest batch of bodies: 1 MiB. */
export const MAX_MESSAGE_BYTES = 1_048_576;
const MAX_DELAY_SECONDS = 900;

export interface OutgoingMessage {
  body: string;
  groupId?: string;
  deduplicationId?: string;
  delaySeconds?: number;
}

/** Refuses what a queue (FIFO or not) would refuse of `entry`: body, delay, group, deduplication id. */
export function checkOutgoing(fifo: boolean, entry: OutgoingMessage): void {
  if (entry.body === '') throw SQS_ERRORS.MissingParameter('The request must contain the parameter MessageBody.');
  if (Buffer.byteLength(entry.body) > MAX_MESSAGE_BYTES)
    throw SQS_ERRORS.InvalidParameterValue(
      `One or more parameters are invalid. Reason: Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`,
    );
  const delay = entry.delaySeconds;
  if (delay !== undefined && (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS))
    throw invalidValue('DelaySeconds', delay, `DelaySeconds must be >= 0 and <= ${MAX_DELAY_SECONDS}.`);
  if (!fifo) return;
  if (delay) throw invalidValue('DelaySeconds', delay, 'The request include parameter that is not valid for this queue type.');
  if (!entry.groupId) throw SQS_ERRORS.MissingParameter('The request must contain the parameter MessageGroupId.');
  // Content-based deduplication is not enabled on these queues: the id is required.
  if (!entry.deduplicationId)
    throw SQS_ERRORS.InvalidParameterValue(
      'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
    );
}
