// Export and import of whole events for the operators' `npm run events` (bin/events.ts): every
// committed event read back, and an exported event written under its own id and version. Kept
// out of events-store.ts so that no Lambda bundle carries a Scan or the import path.
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { planMonths, toStoredEvent, type StoredEvent } from './event-items.ts';
import { EventsStore } from './events-store.ts';
import { IndexedWriter, LostRaceError, type BaseWrite } from './indexed-write.ts';
import { keys } from './table-definition.ts';

export class EventArchive {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly store: EventsStore;
  private readonly writer: IndexedWriter;

  constructor(client: DynamoDBDocumentClient, tableName: string) {
    this.client = client;
    this.tableName = tableName;
    this.store = new EventsStore(client, tableName);
    this.writer = new IndexedWriter(client, tableName, undefined, undefined);
  }

  /**
   * Every committed event with its version, one Scan page (at most 1 MB) at a time: for the
   * operators' export, never for a handler (no function may Scan). Only base items with a
   * version (a create's fence marker has none) are returned.
   */
  async *allEvents(): AsyncGenerator<StoredEvent> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'sk = :sk AND attribute_exists(version)',
          ExpressionAttributeValues: { ':sk': keys.event('').sk },
          ExclusiveStartKey: startKey,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) yield toStoredEvent(item);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  /**
   * Writes an exported event under its own id and version. Absent: created as it was, index
   * included. Present with the same fields: left alone (a re-import changes nothing). Present
   * with other fields: the file wins, through updateEvent (the version grows).
   */
  async importEvent(stored: StoredEvent): Promise<'created' | 'unchanged' | 'replaced'> {
    for (let attempt = 1; ; attempt++) {
      const { eventId, ...fields } = stored.event;
      const current = await this.store.getEvent(eventId);
      if (current) {
        const { eventId: _, ...currentFields } = current.event;
        if (JSON.stringify(sortedEntries(currentFields)) === JSON.stringify(sortedEntries(fields))) return 'unchanged';
        await this.store.updateEvent(eventId, fields);
        return 'replaced';
      }
      const stamp = this.writer.newStamp(stored.version);
      const plan = planMonths(eventId, undefined, stored.event, stamp);
      const now = new Date(stamp.writtenAt).toISOString();
      const base: BaseWrite = () => ({
        Put: {
          TableName: this.tableName,
          Item: { ...keys.event(eventId), ...stored.event, version: stored.version, monthTags: plan.monthTags, lastWriteId: stamp.writeId, createdAt: now, updatedAt: now },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
      try {
        await this.writer.commit({ eventId, stamp, base, plan });
        return 'created';
      } catch (error) {
        // Created meanwhile (another import of the same file): compare again.
        if (!(error instanceof LostRaceError) || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  }
}

/** Reads of the same event compare equal whatever order their fields came in. */
function sortedEntries(value: Record<string, unknown>): [string, unknown][] {
  return Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

