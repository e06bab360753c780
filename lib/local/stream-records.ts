// The stream event source mapping's reading of records, as Lambda documents it: its event
// filtering, where a consumer's answer says to resume, and the record as a function receives it.
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
import type { _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse } from 'aws-lambda';

type Pattern = Record<string, unknown>;

/** Lambda's event filtering for the forms CHANGE_STREAM_FILTER uses: a list of values or `{prefix}`, nested objects. */
export function matchesFilter(pattern: Pattern, value: unknown): boolean {
  return Object.entries(pattern).every(([key, rule]) => {
    const field = (value as Record<string, unknown> | undefined)?.[key];
    if (Array.isArray(rule)) {
      return rule.some((option: unknown) =>
        typeof option === 'object' && option !== null && 'prefix' in option
          ? typeof field === 'string' && field.startsWith((option as { prefix: string }).prefix)
          : field === option,
      );
    }
    return typeof rule === 'object' && rule !== null && matchesFilter(rule as Pattern, field);
  });
}

/**
 * Where a consumer's answer says to resume (ReportBatchItemFailures), as an index into `batch`:
 * undefined for a complete success (no answer, or an empty or null list), the lowest reported
 * record otherwise. An item failure without a string identifier, or with an empty one, fails the
 * whole batch (services-ddb-batchfailurereporting.html, "Success and failure conditions"); so does
 * one that names no record of the batch (not documented; the cautious reading).
 */
export function firstFailedRecord(batch: readonly StreamRecord[], answer: unknown): number | undefined {
  const failures = (answer as Partial<DynamoDBBatchResponse> | null | undefined)?.batchItemFailures;
  if (!Array.isArray(failures) || failures.length === 0) return undefined;
  let lowest = batch.length;
  for (const failure of failures as unknown[]) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    const index =
      typeof identifier === 'string' && identifier !== ''
        ? batch.findIndex((record) => record.dynamodb?.SequenceNumber === identifier)
        : -1;
    if (index < 0) return 0;
    lowest = Math.min(lowest, index);
  }
  return lowest;
}

/** A stream record as Lambda passes it to a function (the SDK's record, with epoch seconds and the source ARN). */
export function lambdaRecord(record: StreamRecord, streamArn: string): unknown {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    ...record,
    dynamodb: { ...record.dynamodb, ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}) },
    eventSourceARN: streamArn,
  };
}
