// What a replay needs of the change feed: the changes after a cursor, in commit order. The feed
// (functions/changes/, GET /special-events/changes) owns the cursor's form, its expiry (a 410
// `cursor-expired` problem) and a malformed cursor (400): its reader throws those HttpProblems and
// this interface passes them through.
import * as v from 'valibot';
import type { ChangeType } from '../changes/change-event.ts';
import { encodeCursor, requestedWindow } from '../changes/change-feed.ts';
import { changeFeedReader } from '../config.ts';
import { ChangeCloudEventText } from './pipeline-messages.ts';

export interface ChangeRecord {
  /** The change's id (the CloudEvent's `id`). */
  id: string;
  type: ChangeType;
  eventId: string;
  /** The CloudEvent's exact JSON text (the change item's `cloudEvent`). */
  cloudEvent: string;
}

export interface ChangesPage {
  /** At most `limit` changes after the cursor, oldest first; possibly fewer, possibly none. */
  changes: ChangeRecord[];
  /** The cursor after the last change returned (or the same cursor when none was). */
  next: string;
  /**
   * Whether the read reached the feed's end: its hold-back boundary (CHANGE_FEED.holdBackMs).
   * A page may hold no change and still not be the end (a walk over empty days stops early).
   */
  complete: boolean;
}

export interface ChangesReader {
  readChangesAfter(cursor: string, limit: number): Promise<ChangesPage>;
}

/**
 * The change feed's reader (functions/store/change-feed-reader.ts) behind the replay's interface:
 * `cursor` is read as the feed reads `since` (its 400 and 410 problems pass through).
 */
export function changesReader(signal?: AbortSignal): ChangesReader {
  const reader = changeFeedReader(signal);
  return {
    async readChangesAfter(cursor, limit) {
      const window = requestedWindow(cursor, new Date());
      const page = await reader.page(window, limit);
      const changes = page.changes.map((cloudEvent) => {
        // A change item the pipeline could not deliver is an error here too, not a guess.
        const change = v.parse(ChangeCloudEventText, cloudEvent);
        return { id: change.id, type: change.type, eventId: change.subject, cloudEvent };
      });
      return { changes, next: encodeCursor(page.next), complete: page.next >= window.until };
    },
  };
}
