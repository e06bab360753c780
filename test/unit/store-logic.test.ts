// The store's pure logic, without DynamoDB: month planning, the month limit, the one write
// condition, what a failed commit means, whether an index entry shows the committed event, list
// order, and the version bound. The DynamoDB Local suites test what needs DynamoDB.
import { describe, expect, test } from '@jest/globals';
import { marshall } from '@aws-sdk/util-dynamodb';
import { LIMITS } from '../../functions/events/limits.ts';
import {
  classifyCommitError,
  datesByMonth,
  isCurrentEntry,
  listOrder,
  MAX_VERSION,
  mergeRunning,
  monthLimitProblem,
  planMonths,
  storedVersionProblem,
  versionCondition,
} from '../../functions/store/event-items.ts';
import { neverReachedDynamoDb } from '../../functions/store/store-errors.ts';
import { keys, type MonthIndexEntry } from '../../functions/store/table-definition.ts';
import { toProblem } from '../../functions/events/problems.ts';

const ID = '0c5b2a61-4a3f-4c43-9f0a-6f1f2a3b4c5d';
/** One date (the `day`th) in each of `count` months from January 2030. */
const monthly = (count: number, day = 1) =>
  Array.from({ length: count }, (_, i) => new Date(Date.UTC(2030, i, day)).toISOString().slice(0, 10));
const entry = (firstDate: string, name: string, eventId: string, dates = [firstDate]): MonthIndexEntry => ({
  eventId,
  month: firstDate.slice(0, 7),
  firstDate,
  name,
  dates,
});
const named = (name: string, code?: string, extra: object = {}) =>
  Object.assign(new Error(name), { name, ...(code ? { code } : {}), ...extra });

describe('month planning', () => {
  test('dates are grouped by month, each month sorted', () => {
    expect([...datesByMonth(['2030-02-03', '2030-01-31', '2030-02-01'])]).toEqual([
      ['2030-01', ['2030-01-31']],
      ['2030-02', ['2030-02-01', '2030-02-03']],
    ]);
  });

  test('a create puts one month item per month, with its index keys; the byMonthEnd keys only with two dates or more', () => {
    const { puts, deletes } = planMonths(ID, undefined, { name: 'Gala', dates: ['2030-01-05', '2030-02-01', '2030-02-09'] });
    expect(deletes).toEqual([]);
    expect(puts.map((item) => item.sk)).toEqual(['MONTH#2030-01', 'MONTH#2030-02']);
    expect(puts[0]).not.toHaveProperty('gsi2pk');
    expect(puts[1]).toMatchObject({ gsi1pk: 'MONTH#2030-02', gsi2pk: 'MONTH#2030-02', dates: ['2030-02-01', '2030-02-09'] });
    expect(keys.monthIndexEntry(puts[1] as Record<string, unknown>)).toEqual(entry('2030-02-01', 'Gala', ID, ['2030-02-01', '2030-02-09']));
  });

  test('an update puts only the months whose dates changed, deletes the months it leaves, and keeps the rest', () => {
    const plan = planMonths(
      ID,
      { name: 'Gala', dates: ['2030-01-05', '2030-02-01', '2030-03-01'] },
      { name: 'Gala', dates: ['2030-01-05', '2030-02-02', '2030-04-01'] },
    );
    expect(plan.puts.map((item) => item.sk)).toEqual(['MONTH#2030-02', 'MONTH#2030-04']);
    expect(plan.deletes).toEqual([keys.monthItem(ID, '2030-03')]);
  });

  test('a rename puts every month again; a delete deletes every month', () => {
    const dates = monthly(3);
    expect(planMonths(ID, { name: 'A', dates }, { name: 'B', dates }).puts).toHaveLength(3);
    expect(planMonths(ID, { name: 'A', dates }, undefined)).toEqual({
      puts: [],
      deletes: dates.map((date) => keys.monthItem(ID, date.slice(0, 7))),
    });
  });

  test(`the largest write fits one transaction: ${LIMITS.maxEventMonths} puts and deletes, the base item, the record and the change item make at most 100 actions`, () => {
    const plan = planMonths(
      ID,
      { name: 'A', dates: monthly(LIMITS.maxEventMonths) },
      { name: 'B', dates: monthly(LIMITS.maxEventMonths).map((date) => `${Number(date.slice(0, 4)) + 4}${date.slice(4)}`) },
    );
    expect(3 + plan.puts.length + plan.deletes.length).toBe(99);
  });
});

describe('the month limit', () => {
  test(`dates in ${LIMITS.maxEventMonths} months are one event; in 49, a problem that names the limit and suggests splitting the series`, () => {
    expect(monthLimitProblem(monthly(48))).toBeUndefined();
    expect(monthLimitProblem([...monthly(48), ...monthly(48, 20)])).toBeUndefined();
    expect(monthLimitProblem(monthly(49))).toBe(
      'must fall in at most 48 distinct months (maxEventMonths), not 49: split the series into several events',
    );
  });
});

describe('the one write condition', () => {
  test('a create writes only where no item is', () => {
    expect(versionCondition(undefined, 'w')).toEqual({ ConditionExpression: 'attribute_not_exists(pk)' });
  });

  test('any other write needs the version it read and no fence of its own id; the fence needs the version alone', () => {
    expect(versionCondition(3, 'w')).toEqual({
      ConditionExpression: 'version = :readVersion AND NOT contains(fencedWrites, :writeId)',
      ExpressionAttributeValues: { ':readVersion': 3, ':writeId': 'w' },
    });
    expect(versionCondition(3)).toEqual({
      ConditionExpression: 'version = :readVersion',
      ExpressionAttributeValues: { ':readVersion': 3 },
    });
  });
});

describe('what a failed commit means', () => {
  const cancelled = (...codes: (string | { Code: string; Item?: unknown })[]) =>
    named('TransactionCanceledException', undefined, {
      CancellationReasons: codes.map((code) => (typeof code === 'string' ? { Code: code } : code)),
    });

  test('the base item changed: what holds the key is read from the cancellation reason', () => {
    const item = marshall({ ...keys.event(ID), eventId: ID, name: 'Gala', dates: [], version: 4 });
    expect(classifyCommitError(cancelled({ Code: 'ConditionalCheckFailed', Item: item }, 'None'), false, true)).toMatchObject({
      kind: 'base-changed',
      found: { version: 4 },
    });
    expect(classifyCommitError(cancelled('ConditionalCheckFailed'), false, false)).toEqual({ kind: 'base-changed', found: undefined });
  });

  test('the record changed: the key is taken; a conflict anywhere: a retry may win', () => {
    expect(classifyCommitError(cancelled('None', 'ConditionalCheckFailed'), false, true)).toEqual({ kind: 'key-taken' });
    // Both changed (a resend whose first attempt applied, racing other writes): the key decides, not another lost race.
    expect(classifyCommitError(cancelled('ConditionalCheckFailed', 'ConditionalCheckFailed'), false, true)).toEqual({ kind: 'key-taken' });
    expect(classifyCommitError(cancelled('None', 'None', 'TransactionConflict'), false, true)).toEqual({ kind: 'conflict' });
    expect(classifyCommitError(named('TransactionConflictException'), false, false)).toEqual({ kind: 'conflict' });
  });

  test('throttling and validation applied nothing; a timeout or a 500 may have applied; a call that never connected applied nothing', () => {
    expect(classifyCommitError(cancelled('ThrottlingError'), false, false)).toEqual({ kind: 'not-applied' });
    expect(classifyCommitError(named('ProvisionedThroughputExceededException'), false, false)).toEqual({ kind: 'not-applied' });
    expect(classifyCommitError(named('ValidationException'), false, false)).toEqual({ kind: 'not-applied' });
    expect(classifyCommitError(named('TimeoutError'), false, false)).toEqual({ kind: 'unknown' });
    expect(classifyCommitError(named('InternalServerError'), false, false)).toEqual({ kind: 'unknown' });
    expect(classifyCommitError(named('Error', 'ECONNRESET'), false, false)).toEqual({ kind: 'unknown' });
    expect(classifyCommitError(named('Error', 'ECONNREFUSED'), true, false)).toEqual({ kind: 'not-applied' });
  });
});

describe('a request that never reached DynamoDB', () => {
  test('is known by the attempt recorder, or by a single attempt that could not connect', () => {
    expect(neverReachedDynamoDb(named('Error', 'ECONNREFUSED', { $neverSent: true }))).toBe(true);
    // An earlier attempt may have reached DynamoDB: the recorder says so.
    expect(neverReachedDynamoDb(named('Error', 'ECONNREFUSED', { $neverSent: false }))).toBe(false);
    expect(neverReachedDynamoDb(named('Error', 'ECONNREFUSED', { $metadata: { attempts: 1 } }))).toBe(true);
    expect(neverReachedDynamoDb(named('Error', 'ECONNREFUSED', { $metadata: { attempts: 3 } }))).toBe(false);
    expect(neverReachedDynamoDb(named('Error', 'ECONNRESET', { $metadata: { attempts: 1 } }))).toBe(false);
  });

  test('a connection refused is a 503 with Retry-After', () => {
    const answer = toProblem(named('Error', 'ECONNREFUSED'));
    expect(answer.problem.status).toBe(503);
    expect(answer.headers['Retry-After']).toBe('1');
  });
});

describe('an index entry counts only if it shows the committed event', () => {
  const committed = {
    eventId: ID,
    name: 'Gala',
    location: 'Hall',
    eventDescription: 'D',
    dates: ['2030-01-05', '2030-02-01', '2030-02-09'],
    price: 0,
  };

  test('the same name and the same dates in its month: counted', () => {
    expect(isCurrentEntry(entry('2030-02-01', 'Gala', ID, ['2030-02-01', '2030-02-09']), committed)).toBe(true);
  });

  test('a lagging entry (old name or dates), or one of a deleted event: not counted', () => {
    expect(isCurrentEntry(entry('2030-02-01', 'Old name', ID, ['2030-02-01', '2030-02-09']), committed)).toBe(false);
    expect(isCurrentEntry(entry('2030-02-01', 'Gala', ID, ['2030-02-01']), committed)).toBe(false);
    expect(isCurrentEntry(entry('2030-03-01', 'Gala', ID), committed)).toBe(false);
    expect(isCurrentEntry(entry('2030-02-01', 'Gala', ID, ['2030-02-01', '2030-02-09']), undefined)).toBe(false);
  });
});

describe('list order', () => {
  test('by first date in the range, then name (binary UTF-8, as DynamoDB sorts), then id', () => {
    const order = (first: string, name: string, id: string) => listOrder(first, { name, eventId: id });
    const sorted = [
      order('2030-01-02', 'A', '1'),
      order('2030-01-01', 'Zeta', '2'),
      order('2030-01-01', 'Art Deco', '3'),
      order('2030-01-01', 'Art', '4'),
      order('2030-01-01', 'Art', '0'),
    ]
      .sort((a, b) => Buffer.compare(a, b))
      .map((buffer) => buffer.toString());
    expect(sorted).toEqual([
      '2030-01-01\0Art\u00000',
      '2030-01-01\0Art\u00004',
      '2030-01-01\0Art Deco\u00003',
      '2030-01-01\0Zeta\u00002',
      '2030-01-02\0A\u00001',
    ]);
    // "É" (C3 89) sorts after "Z" in UTF-8 bytes, as in a DynamoDB key.
    expect(Buffer.compare(order('2030-01-01', 'Édition', '1'), order('2030-01-01', 'Zeta', '1'))).toBe(1);
  });

  test('events running into the range are merged before the first page entry they precede; the rest wait for the month to end', () => {
    const running = [
      { entry: entry('2030-01-01', 'B', 'r1'), order: listOrder('2030-01-10', { name: 'B', eventId: 'r1' }) },
      { entry: entry('2030-01-02', 'A', 'r2'), order: listOrder('2030-01-20', { name: 'A', eventId: 'r2' }) },
    ];
    const page = [entry('2030-01-10', 'A', 'p1'), entry('2030-01-15', 'C', 'p2')];
    expect(mergeRunning(page, running, false).map((e) => e.eventId)).toEqual(['p1', 'r1', 'p2']);
    expect(running.map((r) => r.entry.eventId)).toEqual(['r2']);
    expect(mergeRunning([], running, true).map((e) => e.eventId)).toEqual(['r2']);
  });
});

describe('stored versions', () => {
  test('are whole numbers from 1 to Number.MAX_SAFE_INTEGER', () => {
    expect(MAX_VERSION).toBe(9007199254740991);
    for (const good of [1, 2, MAX_VERSION]) expect(storedVersionProblem(good)).toBeUndefined();
    for (const bad of [0, -1, 1.5, MAX_VERSION + 1, 1e20, Number.NaN, '3', undefined])
      expect(storedVersionProblem(bad)).toMatch(/^the version must be a whole number from 1 to 9007199254740991/);
  });
});
