// The grants check of the fault proxy (bench/support/granted-access.ts): what a DynamoDB request
// needs IAM to allow, and whether a function's declared grants allow it. The end-to-end checks
// (faults.test.ts, webhooks.test.ts) apply it to every request the functions really send.
import { executionRoleSessionToken } from '../../lib/local/lambda-environment.ts';
import { MONTH_INDEX } from '../../functions/store/table-definition.ts';
import { callingFunction, granted, itemAccesses, partitionShape, ungranted } from '../../bench/support/granted-access.ts';

const TABLES = { events: 'events', idempotency: 'idempotency' };
const S = (value: string) => ({ S: value });

describe('itemAccesses', () => {
  test('names each item of a transaction by the action IAM authorises it as', () => {
    const body = {
      TransactItems: [
        { Put: { TableName: 'events', Item: { pk: S('EVENT#1'), sk: S('EVENT') } } },
        { Update: { TableName: 'events', Key: { pk: S('EVENT#1'), sk: S('MONTH#2030-01') } } },
        { Delete: { TableName: 'events', Key: { pk: S('EVENT#1'), sk: S('MONTH#2030-02') } } },
        { ConditionCheck: { TableName: 'idempotency', Key: { id: S('k') } } },
      ],
    };
    expect(itemAccesses('TransactWriteItems', body)).toEqual([
      { action: 'PutItem', table: 'events', partition: 'EVENT#1' },
      { action: 'UpdateItem', table: 'events', partition: 'EVENT#1' },
      { action: 'DeleteItem', table: 'events', partition: 'EVENT#1' },
      { action: 'ConditionCheckItem', table: 'idempotency', partition: undefined },
    ]);
  });

  test("reads a Query's partition from its key condition, names resolved, and an index query by its index", () => {
    expect(
      itemAccesses('Query', {
        TableName: 'events',
        KeyConditionExpression: '#p = :p AND begins_with(sk, :s)',
        ExpressionAttributeNames: { '#p': 'pk' },
        ExpressionAttributeValues: { ':p': S('CHANGES#2030-01-01#3'), ':s': S('x') },
      }),
    ).toEqual([{ action: 'Query', table: 'events', partition: 'CHANGES#2030-01-01#3' }]);
    expect(itemAccesses('Query', { TableName: 'events', IndexName: MONTH_INDEX, KeyConditionExpression: 'gsi1pk = :m' })).toEqual([
      { action: 'Query', table: 'events', index: MONTH_INDEX },
    ]);
  });

  test('lists every key of a batch under the batch action', () => {
    expect(itemAccesses('BatchGetItem', { RequestItems: { events: { Keys: [{ pk: S('EVENT#1') }, { pk: S('EVENT#2') }] } } })).toEqual([
      { action: 'BatchGetItem', table: 'events', partition: 'EVENT#1' },
      { action: 'BatchGetItem', table: 'events', partition: 'EVENT#2' },
    ]);
  });
});

describe('granted', () => {
  test("follows each function's declared actions, tables, index and partitions", () => {
    const fence = { action: 'UpdateItem', table: 'events', partition: 'EVENT#…' };
    expect(granted('update-special-event', fence, TABLES)).toBe(true);
    // The authorizer reads users' items only; the event handlers never read them.
    expect(granted('authorizer', { action: 'GetItem', table: 'events', partition: 'USER#…' }, TABLES)).toBe(true);
    expect(granted('authorizer', { action: 'GetItem', table: 'events', partition: 'EVENT#…' }, TABLES)).toBe(false);
    expect(granted('get-special-event', { action: 'GetItem', table: 'events', partition: 'USER#…' }, TABLES)).toBe(false);
    // The change partitions: the writers put, the feed queries.
    expect(granted('create-special-event', { action: 'PutItem', table: 'events', partition: 'CHANGES#…' }, TABLES)).toBe(true);
    expect(granted('create-special-event', { action: 'Query', table: 'events', partition: 'CHANGES#…' }, TABLES)).toBe(false);
    expect(granted('list-special-event-changes', { action: 'Query', table: 'events', partition: 'CHANGES#…' }, TABLES)).toBe(true);
    expect(granted('list-special-events', { action: 'Query', table: 'events', index: MONTH_INDEX }, TABLES)).toBe(true);
    expect(granted('get-special-event', { action: 'Query', table: 'events', index: MONTH_INDEX }, TABLES)).toBe(false);
    expect(granted('create-special-event', { action: 'PutItem', table: 'idempotency' }, TABLES)).toBe(true);
    expect(granted('create-special-event', { action: 'PutItem', table: 'another-table', partition: 'EVENT#…' }, TABLES)).toBe(false);
    expect(granted('no-such-function', fence, TABLES)).toBe(false);
  });

  test('ungranted names the function, action, table and partition of each refusal', () => {
    expect(
      ungranted(
        [
          { functionName: 'get-special-event', access: { action: 'GetItem', table: 'events', partition: 'EVENT#…' } },
          { functionName: 'get-special-event', access: { action: 'DeleteItem', table: 'events', partition: 'EVENT#…' } },
        ],
        TABLES,
      ),
    ).toEqual(['get-special-event: dynamodb:DeleteItem on events (EVENT#…)']);
  });
});

test("a function is known by its environments' session token, and partitions are recorded without their ids", () => {
  expect(callingFunction(executionRoleSessionToken('get-special-event'))).toBe('get-special-event');
  expect(callingFunction(undefined)).toBeUndefined();
  expect(callingFunction('some-other-token')).toBeUndefined();
  expect([partitionShape('EVENT#123'), partitionShape('CHANGES#2030-01-01#3'), partitionShape('WEBHOOKS')]).toEqual([
    'EVENT#…',
    'CHANGES#…',
    'WEBHOOKS',
  ]);
});
