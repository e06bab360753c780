// What every store and reader of the events table starts from: the Document client, the table's
// name, and the signal that aborts its calls. Each store used to repeat these fields, its
// constructor and its call options; they live here once.
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/** One page of a Query or Scan answer: its items, and the key to read the next page from (none: the last page). */
interface ItemPage {
  Items?: Record<string, unknown>[];
  LastEvaluatedKey?: Record<string, unknown>;
}

export abstract class TableStore {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Aborts every DynamoDB call (and retry wait) of this store: the invocation's early timeout. */
  readonly signal: AbortSignal | undefined;

  constructor(client: DynamoDBDocumentClient, tableName: string, signal?: AbortSignal) {
    this.client = client;
    this.tableName = tableName;
    this.signal = signal;
  }

  /** The options of every call: the abort signal, when there is one. */
  protected options(): { abortSignal?: AbortSignal } {
    return this.signal ? { abortSignal: this.signal } : {};
  }

  /** Every item `query` finds in this table, page after page. */
  protected queryEveryItem(query: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): AsyncGenerator<Record<string, unknown>> {
    return everyItem((start) =>
      this.client.send(new QueryCommand({ TableName: this.tableName, ...query, ExclusiveStartKey: start }), this.options()),
    );
  }
}

/**
 * Every item of a Query or Scan, read page by page (DynamoDB answers at most 1 MB a call):
 * `readPage` reads the page that starts at `start` (undefined: the first).
 */
export async function* everyItem(
  readPage: (start: Record<string, unknown> | undefined) => Promise<ItemPage>,
): AsyncGenerator<Record<string, unknown>> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await readPage(start);
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Whether `error` is a cancelled transaction whose `index`th item failed its condition. */
export function conditionFailedAt(error: unknown, index: number): boolean {
  const reasons = (error as { CancellationReasons?: { Code?: string }[] } | undefined)?.CancellationReasons;
  return (error as Error | undefined)?.name === 'TransactionCanceledException' && reasons?.[index]?.Code === 'ConditionalCheckFailed';
}
