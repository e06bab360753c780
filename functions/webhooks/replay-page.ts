// What a replay reads of the change feed: the changes after a cursor, in commit order, through the
// feed's one reader (ChangeFeedReader, functions/store/change-feed-reader.ts), which the handler
// wires from config.ts. The feed (functions/changes/, GET /special-events/changes) owns the
// cursor's form, its expiry (a 410 `cursor-expired` problem) and a malformed cursor (400): those
// HttpProblems pass through.
import * as v from 'valibot';
import type { ChangeType } from '../changes/change-event.ts';
import { encodeCursor, requestedWindow } from '../changes/change-feed.ts';
import type { ChangeFeedReader } from '../store/change-feed-reader.ts';
import { ChangeCloudEventText } from './pipeline-messages.ts';

export interface ReplayedChange {
  /** The change's id (the CloudEvent's `id`). */
  id: string;
  type: ChangeType;
  eventId: string;
  /** The CloudEvent's exact JSON text (the change item's `cloudEvent`). */
  cloudEvent: string;
}

export interface ReplayPage {
  /** At most `limit` changes after the cursor, oldest first; possibly fewer, possibly none. */
  changes: ReplayedChange[];
  /** The cursor after the last change returned (or the same cursor when none was). */
  next: string;
  /**
   * Whether the read reached the feed's end: its hold-back boundary (CHANGE_FEED.holdBackMs).
   * A page may hold no change and still not be the end (a walk over empty days stops early).
   */
  complete: boolean;
}

/** The changes after `cursor`, read as the feed reads `since` (its 400 and 410 problems pass through). */
export async function replayPage(reader: ChangeFeedReader, cursor: string, limit: number): Promise<ReplayPage> {
  const window = requestedWindow(cursor, new Date());
  const page = await reader.page(window, limit);
  const changes = page.changes.map((cloudEvent) => {
    // A change item the pipeline could not deliver is an error here too, not a guess.
    const change = v.parse(ChangeCloudEventText, cloudEvent);
    return { id: change.id, type: change.type, eventId: change.subject, cloudEvent };
  });
  return { changes, next: encodeCursor(page.next), complete: page.next >= window.until };
}
