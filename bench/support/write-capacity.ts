// The write capacity a store's writes cost, counted on the real store code through a client that
// adds up what each write it sends is billed.
import { DynamoDBClient, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { createDocumentClient, dynamoDbClientConfig } from '../../functions/shared/dynamodb-client.ts';
import { EventsStore } from '../../functions/shared/events-store.ts';

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
 * unit per `byMonth` entry written or removed (its projection, keys and `dates`, is under 1 KB).
 * Computed, because DynamoDB Local reports a transaction as if it wrote one item; it reports
 * single writes correctly, index included.
 */
export function transactionWriteCapacity(items: TransactWriteItem[]): number {
  const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
  return items.reduce((sum, item) => {
    if (item.Put) return sum + 2 * units(itemBytes(item.Put.Item)) + (item.Put.Item?.gsi1pk ? 1 : 0);
    if (item.Delete) return sum + 2 + (item.Delete.Key?.sk?.S?.startsWith('MONTH#') ? 1 : 0);
    if (item.Update) return sum + 2 * units(itemBytes(item.Update.ExpressionAttributeValues) + 100);
    return sum;
  }, 0);
}

/** A store whose client adds up the write capacity of every write it sends. */
export function countingEventsStore(eventsTable: string, idempotencyTable: string): { store: EventsStore; consumed: () => number; destroy: () => void } {
  let writeCapacity = 0;
  const client = new DynamoDBClient(dynamoDbClientConfig());
  const singleWrites = new Set(['PutItemCommand', 'DeleteItemCommand', 'UpdateItemCommand']);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        writeCapacity += transactionWriteCapacity((args.input as { TransactItems: TransactWriteItem[] }).TransactItems);
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
  return { store: new EventsStore(createDocumentClient(client), eventsTable, idempotencyTable), consumed: () => writeCapacity, destroy: () => client.destroy() };
}
