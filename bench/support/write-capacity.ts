// The write capacity a store's writes cost, counted on the real store code through a client that
// adds up what each write it sends is billed.
import { DynamoDBClient, GetItemCommand, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { createDocumentClient, dynamoDbClientConfig } from '../../functions/store/dynamodb-client.ts';
import { marshall } from '@aws-sdk/util-dynamodb';
import { EventsStore } from '../../functions/store/events-store.ts';
import { CHANGE_ITEM } from '../../functions/changes/change-event.ts';

type Attributes = Record<string, AttributeValue>;

/** An item's size as DynamoDB bills it: attribute names plus values (numbers approximated). */
function itemBytes(item: Attributes | undefined): number {
  const valueBytes = (value: AttributeValue): number => {
    if (value.S !== undefined) return Buffer.byteLength(value.S);
    if (value.N !== undefined) return Math.ceil(value.N.length / 2) + 1;
    if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
    if (value.M !== undefined) return 3 + itemBytes(value.M);
    return 1;
  };
  return Object.entries(item ?? {}).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

/**
 * Write capacity of a TransactWriteItems by DynamoDB's rules: 2 units per KB of each item written
 * (deleted month items are under 1 KB; an updated base item is about its new values), plus one
 * unit per index entry written or removed (`byMonth`, and `byMonthEnd` for a month item with two
 * or more dates; each projection, keys and `dates`, is under 1 KB). `indexesOf` says in how many
 * indexes a deleted item was (the counting store remembers the month items it put and reads the
 * others before the transaction; 1 if unknown).
 * Computed, because DynamoDB Local reports a transaction as if it wrote one item; it reports
 * single writes correctly, index included.
 */
export function transactionWriteCapacity(
  items: TransactWriteItem[],
  indexesOf: (pk: string, sk: string) => number | undefined = () => undefined,
): number {
  const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
  return items.reduce((sum, item) => {
    if (item.Put) return sum + 2 * units(itemBytes(item.Put.Item)) + indexEntries(item.Put.Item);
    if (item.Delete) {
      const { pk, sk } = { pk: item.Delete.Key?.pk?.S ?? '', sk: item.Delete.Key?.sk?.S ?? '' };
      return sum + 2 + (sk.startsWith('MONTH#') ? (indexesOf(pk, sk) ?? 1) : 0);
    }
    if (item.Update) return sum + 2 * units(itemBytes(item.Update.ExpressionAttributeValues) + 100);
    return sum;
  }, 0);
}

function indexEntries(item: Record<string, AttributeValue> | undefined): number {
  return (item?.gsi1pk ? 1 : 0) + (item?.gsi2pk ? 1 : 0);
}

/** A Document client's transaction items as DynamoDB receives them (attribute values). */
function marshalled(items: Record<string, Record<string, unknown>>[]): TransactWriteItem[] {
  const values = (plain: unknown) => (plain ? marshall(plain as Record<string, unknown>, { removeUndefinedValues: true }) : undefined);
  return items.map(({ Put, Delete, Update, ConditionCheck }) => ({
    ...(Put ? { Put: { ...Put, Item: values(Put.Item) } } : {}),
    ...(Delete ? { Delete: { ...Delete, Key: values(Delete.Key) } } : {}),
    ...(Update
      ? { Update: { ...Update, Key: values(Update.Key), ExpressionAttributeValues: values(Update.ExpressionAttributeValues) } }
      : {}),
    ...(ConditionCheck ? { ConditionCheck: { ...ConditionCheck, Key: values(ConditionCheck.Key) } } : {}),
  })) as TransactWriteItem[];
}

/** The change items' share of a transaction's write capacity (the feed's outbox: `CHANGES#` partitions). */
export function changeItemWriteCapacity(items: TransactWriteItem[]): number {
  return transactionWriteCapacity(items.filter((item) => item.Put?.Item?.pk?.S?.startsWith(CHANGE_ITEM.pkPrefix)));
}

/** A store whose client adds up the write capacity of every write it sends, and the change items' share of it. */
export function countingEventsStore(
  eventsTable: string,
  idempotencyTable: string,
): { store: EventsStore; consumed: () => number; consumedByChanges: () => number; destroy: () => void } {
  let writeCapacity = 0;
  let changeCapacity = 0;
  /** pk and sk of each month item this store put → the number of indexes it is in. */
  const monthItemIndexes = new Map<string, number>();
  const client = new DynamoDBClient(dynamoDbClientConfig());
  const singleWrites = new Set(['PutItemCommand', 'DeleteItemCommand', 'UpdateItemCommand']);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        // The Document client marshalls just before serializing: here the values are still plain.
        const transactItems = marshalled((args.input as { TransactItems: Record<string, Record<string, unknown>>[] }).TransactItems);
        // A month item this store did not put (loaded by the bench): read in how many indexes it is.
        for (const { Delete } of transactItems) {
          const key = Delete?.Key;
          const id = `${key?.pk?.S} ${key?.sk?.S}`;
          if (!Delete || !key?.sk?.S?.startsWith('MONTH#') || monthItemIndexes.has(id)) continue;
          const { Item } = await client.send(
            new GetItemCommand({ TableName: Delete.TableName, Key: key, ProjectionExpression: 'gsi1pk, gsi2pk' }),
          );
          monthItemIndexes.set(id, indexEntries(Item));
        }
        writeCapacity += transactionWriteCapacity(transactItems, (pk, sk) => monthItemIndexes.get(`${pk} ${sk}`));
        changeCapacity += changeItemWriteCapacity(transactItems);
        for (const { Put } of transactItems)
          if (Put?.Item?.gsi1pk) monthItemIndexes.set(`${Put.Item.pk?.S} ${Put.Item.sk?.S}`, indexEntries(Put.Item));
        return next(args);
      }
      if (!singleWrites.has(context.commandName ?? '')) return next(args);
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      writeCapacity += (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      return result;
    },
    { step: 'initialize', name: 'countWriteCapacity' },
  );
  return {
    store: new EventsStore(createDocumentClient(client), eventsTable, idempotencyTable),
    consumed: () => writeCapacity,
    consumedByChanges: () => changeCapacity,
    destroy: () => client.destroy(),
  };
}
