// How the local stream mapping reads a consumer's partial batch response: the success and failure
// conditions of https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html.
// The give-up path runs end to end in test/e2e/webhooks.test.ts.
import type { _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import { firstFailedRecord } from '../../lib/local/stream-records.ts';

const batch: StreamRecord[] = ['100', '200', '300'].map((SequenceNumber) => ({ dynamodb: { SequenceNumber } }));

describe('a partial batch response', () => {
  test.each([
    ['no answer', undefined],
    ['a null answer', null],
    ['an empty answer', {}],
    ['a null list', { batchItemFailures: null }],
    ['an empty list', { batchItemFailures: [] }],
  ])('%s is a complete success', (_, answer) => {
    expect(firstFailedRecord(batch, answer)).toBeUndefined();
  });

  test('one failed record: the mapping resumes at it', () => {
    expect(firstFailedRecord(batch, { batchItemFailures: [{ itemIdentifier: '200' }] })).toBe(1);
  });

  test('several: at the lowest sequence number, whatever their order', () => {
    expect(firstFailedRecord(batch, { batchItemFailures: [{ itemIdentifier: '300' }, { itemIdentifier: '200' }] })).toBe(1);
  });

  test.each([
    ['an empty identifier', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a null identifier', { batchItemFailures: [{ itemIdentifier: null }] }],
    ['a wrong key name', { batchItemFailures: [{ itemId: '200' }] }],
    ['an identifier of no record in the batch', { batchItemFailures: [{ itemIdentifier: '250' }] }],
    ['a good identifier beside a bad one', { batchItemFailures: [{ itemIdentifier: '300' }, { itemIdentifier: '' }] }],
  ])('%s fails the whole batch', (_, answer) => {
    expect(firstFailedRecord(batch, answer)).toBe(0);
  });
});
