// Export and import of whole events for the operators' `npm run events` (bin/events.ts): every
// committed event read back, and an exported event written under its own id and version through
// the store's one write path. The Scan lives here so that no Lambda bundle carries it.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { monthLimitProblem, storedVersionProblem, toStoredEvent, type StoredEvent } from './event-items.ts';
import { EventsStore } from './events-store.ts';
import { keys } from './table-definition.ts';
import { everyItem } from './table-store.ts';

/**
 * Why the store would refuse to import this event (the rules its write path applies beyond the
 * schema: at most LIMITS.maxEventMonths months, a version it can store), or undefined: the import
 * asks before it writes anything.
 */
export function importProblem(stored: { dates: readonly string[]; version: unknown }): string | undefined {
  const months = monthLimitProblem(stored.dates);
  return months ? `dates ${months}` : storedVersionProblem(stored.version);
}

/** The store with a Scan of every event; its `importEvent` writes one back. */
export class EventArchive extends EventsStore {
  /**
   * Every committed event with its version, one Scan page (at most 1 MB) at a time: for the
   * operators' export, never for a handler (no function may Scan). Only base items with a
   * version (a create's fence marker has none) are returned.
   */
  async *allEvents(): AsyncGenerator<StoredEvent> {
    const items = everyItem((start) =>
      this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'sk = :sk AND attribute_exists(version)',
          ExpressionAttributeValues: { ':sk': keys.event('').sk },
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      ),
    );
    for await (const item of items) yield toStoredEvent(item);
  }
}
