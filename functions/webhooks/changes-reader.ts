// What a replay needs of the change feed: the changes after a cursor, in commit order. The feed
// (functions/changes/, GET /special-events/changes) owns the cursor's form, its expiry (a 410
// `cursor-expired` problem) and a malformed cursor (400): its reader throws those HttpProblems and
// this interface passes them through. `changesReader()` is where the feed's reader is plugged in.
import type { ChangeType } from '../changes/change-event.ts';

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
}

export interface ChangesReader {
  readChangesAfter(cursor: string, limit: number): Promise<ChangesPage>;
}

/**
 * The change feed's reader. The feed lands on its own branch (issue 33): until it is wired here,
 * a replay cannot read changes and fails (500) rather than pretending to have replayed.
 */
export function changesReader(_signal?: AbortSignal): ChangesReader {
  return {
    readChangesAfter: () => Promise.reject(new Error('The change feed reader is not wired in functions/webhooks/changes-reader.ts')),
  };
}
