// Every change the feed still holds (the last CHANGE_FEED.retentionDays), read page after page:
// what a calendar feed's cancellations are derived from (feed-entries.ts). A snapshot, not a
// cursor walk: it reads up to now, past the hold-back a cursor keeps (a change that lands after
// this read shows in the next poll).
import type { ChangeEvent } from '../changes/change-event.ts';
import { endOfMoment, RETENTION_MS } from '../changes/change-feed.ts';
import { LIMITS } from '../events/limits.ts';
import type { ChangeFeedReader } from '../store/change-feed-reader.ts';

export async function recentChanges(reader: ChangeFeedReader, now: Date): Promise<ChangeEvent[]> {
  const until = endOfMoment(now);
  let from = endOfMoment(new Date(now.getTime() - RETENTION_MS));
  const changes: ChangeEvent[] = [];
  while (from < until) {
    const page = await reader.page({ from, until }, LIMITS.maxChangesLimit);
    changes.push(...page.changes.map((text) => JSON.parse(text) as ChangeEvent));
    if (page.next <= from) break; // no progress (cannot happen: each page reads on); never loop
    from = page.next;
  }
  return changes;
}
