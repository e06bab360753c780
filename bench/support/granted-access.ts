// What each function's DynamoDB requests need from IAM, checked against what the stack grants it
// (DATA_ACCESS, turned into policy statements by lib/cdk/function-permissions.ts). DynamoDB Local
// checks no permission, so a request a function's role does not allow would only fail deployed
// (AccessDeniedException); the fault proxy records every request with the session token of the
// function that sent it (lib/local/lambda-environment.ts), and this module says which of them IAM
// would refuse. The rules modelled: a transaction's items are authorised as PutItem, UpdateItem,
// DeleteItem and ConditionCheckItem, a batch as BatchGetItem/BatchWriteItem; dynamodb:LeadingKeys
// (ForAllValues:StringLike) matches the partition key values of the items read or written.
//   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html
//   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
//   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/api-permissions-reference.html
import { DATA_ACCESS, LEADING_KEY_PATTERNS } from '../../lib/cdk/function-permissions.ts';
import { executionRoleSessionToken } from '../../lib/local/lambda-environment.ts';
import { eventsTable, MONTH_END_INDEX, MONTH_INDEX } from '../../functions/store/table-definition.ts';

/** One action on one table (or index) for one partition, as IAM evaluates it. */
export interface ItemAccess {
  action: string;
  table: string;
  index?: string;
  /** The partition key value (undefined where the request names none, as a Scan). */
  partition?: string;
}

type Attributes = Record<string, Record<string, unknown>>;
type Body = Record<string, unknown>;

const PARTITION_KEY = eventsTable.partitionKey.name;
const ITEM_ACTIONS = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
} as const;

const partitionOf = (item: unknown) => {
  const value = (item as Attributes | undefined)?.[PARTITION_KEY]?.S;
  return typeof value === 'string' ? value : undefined;
};

/** The partition a Query's key condition names: `<partition key> = :value`, names resolved. */
function queriedPartition(body: Body): string | undefined {
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (body.ExpressionAttributeValues ?? {}) as Attributes;
  for (const match of (typeof body.KeyConditionExpression === 'string' ? body.KeyConditionExpression : '').matchAll(
    /([#\w]+)\s*=\s*(:\w+)/g,
  )) {
    const name = names[match[1] as string] ?? match[1];
    if (name === PARTITION_KEY) return partitionOf({ [PARTITION_KEY]: values[match[2] as string] });
  }
  return undefined;
}

/** Every access a DynamoDB request (its X-Amz-Target operation and JSON body) needs IAM to allow. */
export function itemAccesses(operation: string, body: Body): ItemAccess[] {
  const table = typeof body.TableName === 'string' ? body.TableName : '';
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [{ action: operation, table, partition: partitionOf(body.Key) }];
    case 'PutItem':
      return [{ action: operation, table, partition: partitionOf(body.Item) }];
    case 'Query':
      return [
        typeof body.IndexName === 'string'
          ? { action: operation, table, index: body.IndexName }
          : { action: operation, table, partition: queriedPartition(body) },
      ];
    case 'Scan':
      return [{ action: operation, table, ...(typeof body.IndexName === 'string' ? { index: body.IndexName } : {}) }];
    case 'BatchGetItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap(([name, request]) =>
        (request.Keys ?? []).map((key) => ({ action: operation, table: name, partition: partitionOf(key) })),
      );
    case 'BatchWriteItem':
      return Object.entries(
        (body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]>,
      ).flatMap(([name, requests]) =>
        requests.map((request) => ({
          action: operation,
          table: name,
          partition: partitionOf(request.PutRequest?.Item ?? request.DeleteRequest?.Key),
        })),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return ((body.TransactItems ?? []) as Record<string, { TableName: string; Key?: unknown; Item?: unknown }>[]).flatMap((entry) =>
        Object.entries(entry).map(([kind, item]) => ({
          action: ITEM_ACTIONS[kind as keyof typeof ITEM_ACTIONS],
          table: item.TableName,
          partition: partitionOf(item.Key ?? item.Item),
        })),
      );
    default:
      // Table-level calls (DescribeTable...): no function makes them.
      return [{ action: operation, table }];
  }
}

/** IAM's StringLike: `*` any run of characters, `?` one. */
function stringLike(pattern: string, value: string): boolean {
  const expression = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${expression}$`, 's').test(value);
}

const inPartitions = (patterns: readonly string[], partition: string | undefined) =>
  partition !== undefined && patterns.some((pattern) => stringLike(pattern, partition));

/** Whether the role of the function `functionName` allows `access`, on the stack's events and idempotency tables. */
export function granted(functionName: string, access: ItemAccess, tables: { events: string; idempotency: string }): boolean {
  const grants = DATA_ACCESS[functionName];
  if (!grants) return false;
  const has = (actions: readonly string[] | undefined) => actions?.includes(`dynamodb:${access.action}`) ?? false;
  if (access.table === tables.idempotency) return !access.index && has(grants.idempotency);
  if (access.table !== tables.events) return false;
  if (access.index) return (access.index === MONTH_INDEX || access.index === MONTH_END_INDEX) && has(grants.dateIndex);
  return (
    (has(grants.events?.actions) && inPartitions(LEADING_KEY_PATTERNS[grants.events?.partitions ?? 'events'], access.partition)) ||
    (has(grants.changes) && inPartitions(LEADING_KEY_PATTERNS.changes, access.partition))
  );
}

/** The function whose environment sent a request with this session token, if a function did. */
export function callingFunction(sessionToken: string | undefined): string | undefined {
  const prefix = executionRoleSessionToken('');
  return sessionToken?.startsWith(prefix) ? sessionToken.slice(prefix.length) : undefined;
}

/** A partition key value with its id part generalised (`EVENT#1234` -> `EVENT#…`), so that a record stays small. */
export function partitionShape(partition: string | undefined): string | undefined {
  if (partition === undefined) return undefined;
  const hash = partition.indexOf('#');
  return hash < 0 ? partition : `${partition.slice(0, hash + 1)}…`;
}

/** An access a function's request needed, as the fault proxy records it. */
export interface RecordedAccess {
  functionName: string;
  access: ItemAccess;
}

/** The recorded accesses the sending function's role would be refused, one readable line each. */
export function ungranted(recorded: Iterable<RecordedAccess>, tables: { events: string; idempotency: string }): string[] {
  return [...recorded]
    .filter(({ functionName, access }) => !granted(functionName, access, tables))
    .map(
      ({ functionName, access }) =>
        `${functionName}: dynamodb:${access.action} on ${access.table}${access.index ? `/index/${access.index}` : ''} (${access.partition ?? 'no partition'})`,
    );
}
