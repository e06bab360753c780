// The change feed under concurrent writers (against the local API whose DynamoDB cancels a share
// of writes, test/support/global-setup.ts): a walk holds every committed version of every event
// exactly once, in rising order per event.
import type { ChangeEvent } from '../../functions/changes/change-event.ts';
import { apiRetrying, createEvent, isRefused, useInjectedApi, withIdempotencyKey } from '../support/api-client.ts';
import { FeedWalker, feedCursorNow } from '../support/change-feed.ts';

useInjectedApi();

const EVENTS = 10;
const WRITERS = 4;
const WRITES_EACH = 3;

test(`with ${WRITERS} concurrent writers on each of ${EVENTS} events, the walk holds every committed version exactly once, rising per event`, async () => {
  const walker = new FeedWalker(await feedCursorNow());
  const events = await Promise.all(Array.from({ length: EVENTS }, (_, i) => createEvent({ name: `Feed race ${i}` })));
  // Each writer changes its event WRITES_EACH times, last writer wins; the ETag of each 200 is a
  // committed version. A write still refused after the client's retries (409 or 503 with
  // Retry-After: a writer can lose every race it is given on a busy machine) wrote nothing, so the
  // walk must not hold it.
  const committed = new Map(events.map((event) => [event.eventId, new Set<number>([1])]));
  await Promise.all(
    events.flatMap((event) =>
      Array.from({ length: WRITERS }, async (_, writer) => {
        for (let write = 0; write < WRITES_EACH; write++) {
          const answer = await apiRetrying('PATCH', `/special-events/${event.eventId}`, {
            json: { price: writer * 100 + write },
            headers: withIdempotencyKey(),
          });
          if (isRefused(answer)) continue;
          expect(answer.status).toBe(200);
          committed.get(event.eventId)?.add(Number(JSON.parse(answer.headers.get('etag') ?? '0')));
        }
      }),
    ),
  );
  // Every committed version, 1 to the last, with no gap: each 200 applied once.
  for (const versions of committed.values()) expect([...versions].sort((a, b) => a - b)).toEqual(range(versions.size));
  const committedCount = [...committed.values()].reduce((sum, versions) => sum + versions.size, 0);

  const changes = await walker.until(committed.keys(), (found) => found.length >= committedCount);
  const byEvent = new Map<string, ChangeEvent[]>();
  for (const change of changes) byEvent.set(change.subject, [...(byEvent.get(change.subject) ?? []), change]);
  for (const event of events) {
    const versions = (byEvent.get(event.eventId) ?? []).map((change) => change.data.version);
    expect(versions).toEqual(range(committed.get(event.eventId)?.size ?? 0));
  }
  // Each change's previous is the state the change before it left.
  for (const list of byEvent.values()) {
    for (let i = 1; i < list.length; i++) expect(list[i]?.data.previous).toEqual(list[i - 1]?.data.event);
  }
  expect(new Set(changes.map((change) => change.id)).size).toBe(changes.length);
  // 120 writes and a walk: on a busy machine past the default limit, which here only bounds a hang.
}, 300_000);

function range(last: number): number[] {
  return Array.from({ length: last }, (_, i) => i + 1);
}
