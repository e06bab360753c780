// A partner's walk of the change feed (docs/API.md, "Change feed"): from a cursor, page after page
// along `next`, until a page says `caughtUp` (the hold-back boundary), again and again until what
// the test waits for is there.
import type { ChangeEvent } from '../../functions/changes/change-event.ts';
import { CHANGE_FEED } from '../../functions/changes/change-feed.ts';
import { api, INDEX_SETTLE_BOUND_MS, readUntilSettled, type ApiResponse, type RequestOptions } from './api-client.ts';

export interface FeedPage {
  changes: ChangeEvent[];
  next: string;
  caughtUp: boolean;
}

export async function feedPage(query: string, options: RequestOptions = {}): Promise<ApiResponse<FeedPage>> {
  return api<FeedPage>('GET', `/special-events/changes${query}`, { as: 'viewer', ...options });
}

/** The cursor of what follows now (since=now). */
export async function feedCursorNow(): Promise<string> {
  const page = await feedPage('?since=now');
  if (page.status !== 200) throw new Error(`since=now failed: ${page.status} ${page.text}`);
  return page.body.next;
}

export class FeedWalker {
  readonly changes: ChangeEvent[] = [];
  /** Every page's text, so a test can check the bytes served. */
  readonly texts: string[] = [];
  cursor: string;
  constructor(cursor: string) {
    this.cursor = cursor;
  }

  /** Follows `next` until a page says `caughtUp` (the sync rule of docs/API.md); returns the changes read on the way. */
  async catchUp(limit = 50): Promise<ChangeEvent[]> {
    const read: ChangeEvent[] = [];
    for (;;) {
      const page = await feedPage(`?since=${this.cursor}&limit=${limit}`);
      if (page.status !== 200) throw new Error(`the feed answered ${page.status}: ${page.text}`);
      this.texts.push(page.text);
      read.push(...page.body.changes);
      this.cursor = page.body.next;
      if (page.body.caughtUp) break;
    }
    this.changes.push(...read);
    return read;
  }

  /**
   * Catches up until `settled` holds of the changes of the events in `eventIds`, for at most the
   * feed's hold-back plus INDEX_SETTLE_BOUND_MS (a change shows only after the hold-back, and a
   * catch-up pass on a loaded machine takes seconds): it returns, the caller asserts.
   */
  async until(eventIds: Iterable<string>, settled: (changes: ChangeEvent[]) => boolean): Promise<ChangeEvent[]> {
    const wanted = new Set(eventIds);
    const of = () => this.changes.filter((change) => wanted.has(change.subject));
    await readUntilSettled(
      () => this.catchUp(),
      () => settled(of()),
      () => undefined,
      CHANGE_FEED.holdBackMs + INDEX_SETTLE_BOUND_MS,
    );
    return of();
  }
}
