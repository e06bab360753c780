// Every change the feed still holds (the last CHANGE_FEED.retentionDays): what a calendar feed's
// cancellations are derived from (feed-entries.ts). Read with the feed's own guarantee: behind the
// hold-back boundary (CHANGE_FEED.holdBackMs) every committed change is readable and no new one
// appears, so an execution environment keeps what it read up to that boundary and, on its next
// request, reads only from there on; the newest moments, after the boundary, are read afresh every
// time. A cold environment reads the retention window in parallel spans of days.
import type { ChangeEvent } from '../changes/change-event.ts';
import { CHANGE_FEED, endOfMoment, positionTime, RETENTION_MS, type FeedPosition } from '../changes/change-feed.ts';
import { LIMITS } from '../events/limits.ts';
import type { ChangeFeedReader } from '../store/change-feed-reader.ts';

/**
 * Spans of a cold read: one span a day would put every day's shard queries in flight at once (256),
 * past the SDK's 50 sockets per client (@smithy/node-http-handler's default), where the queued calls
 * meet the client's request timeout (a 503, seen on DynamoDB Local). Spans of six days keep at most
 * 6 x CHANGE_FEED.shards = 48 queries in flight: six rounds instead of 32.
 */
const DAYS_PER_SPAN = 6;
const DAY_MS = 86_400_000;

/** What this environment has read: every change up to `position`, which no later commit can precede. */
let settled: { position: FeedPosition; changes: ChangeEvent[] } | undefined;

/** The changes after `from` and up to `until`, in commit order. */
async function readSpan(reader: ChangeFeedReader, from: FeedPosition, until: FeedPosition): Promise<ChangeEvent[]> {
  const changes: ChangeEvent[] = [];
  let position = from;
  while (position < until) {
    const page = await reader.page({ from: position, until }, LIMITS.maxChangesLimit);
    changes.push(...page.changes.map((text) => JSON.parse(text) as ChangeEvent));
    if (page.next <= position) break; // every page reads on; never loop
    position = page.next;
  }
  return changes;
}

/** The changes after `from` and up to `until`, spans of DAYS_PER_SPAN days read side by side. */
async function readWindow(reader: ChangeFeedReader, from: FeedPosition, until: FeedPosition): Promise<ChangeEvent[]> {
  const bounds: FeedPosition[] = [from];
  for (
    let time = Date.parse(positionTime(from)) + DAYS_PER_SPAN * DAY_MS;
    time < Date.parse(positionTime(until));
    time += DAYS_PER_SPAN * DAY_MS
  )
    bounds.push(endOfMoment(new Date(time)));
  bounds.push(until);
  const spans = await Promise.all(bounds.slice(1).map((end, i) => readSpan(reader, bounds[i] as FeedPosition, end)));
  return spans.flat();
}

export async function recentChanges(reader: ChangeFeedReader, now: Date): Promise<ChangeEvent[]> {
  const oldest = endOfMoment(new Date(now.getTime() - RETENTION_MS));
  const boundary = endOfMoment(new Date(now.getTime() - CHANGE_FEED.holdBackMs));
  const known = settled && settled.position > oldest ? settled : { position: oldest, changes: [] };
  // A clock behind the one of the last request never moves the position back.
  const position = known.position > boundary ? known.position : boundary;
  const [added, newest] = await Promise.all([readWindow(reader, known.position, position), readSpan(reader, position, endOfMoment(now))]);
  const oldestTime = positionTime(oldest);
  settled = { position, changes: [...known.changes.filter((change) => change.time > oldestTime), ...added] };
  return [...settled.changes, ...newest];
}
