// The event schemas the document names in components.schemas (the very valibot schemas the
// handlers validate with), and the small helpers that refer to components and build JSON content.
import * as v from 'valibot';
import {
  CalendarDate,
  CreateEventRequest,
  EventDates,
  EventDescription,
  EventId,
  EventLocation,
  EventName,
  EventPrice,
  SpecialEvent,
  UpdateEventRequest,
} from '../../functions/events/event-schema.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { CHANGE_SOURCE, CHANGE_TYPES } from '../../functions/changes/change-event.ts';
import { CHANGE_FEED } from '../../functions/changes/change-feed.ts';
import { SCHEMA_REF_PREFIX } from './json-schemas.ts';

/** Schemas shared by name in components.schemas (and referenced from everything else). */
export const EVENT_SCHEMAS = {
  EventId,
  EventName,
  EventLocation,
  EventDescription,
  CalendarDate,
  EventDates,
  EventPrice,
  SpecialEvent,
  CreateSpecialEventRequest: CreateEventRequest,
  UpdateSpecialEventRequest: UpdateEventRequest,
} satisfies Record<string, v.GenericSchema>;

export const SpecialEventList = v.pipe(
  v.array(SpecialEvent),
  v.maxLength(LIMITS.maxListLimit),
  v.description(`One page of special events, at most \`limit\` of them, ordered by their first date in the range, then name, then id`),
);

/** A change to a special event (functions/changes/change-event.ts), as the feed serves it and a webhook delivers it. */
export const ChangeEvent = v.pipe(
  v.strictObject({
    specversion: v.pipe(v.literal('1.0'), v.description('CloudEvents version')),
    id: v.pipe(
      v.string(),
      v.regex(/^[^.]+$/),
      v.description(
        'Unique per change and the same on every read or delivery of it; contains no `.`; with `source`, identifies the change',
      ),
    ),
    source: v.literal(CHANGE_SOURCE),
    type: v.pipe(v.picklist(CHANGE_TYPES), v.description('What happened: a creation, an update (PATCH) or a deletion (a cancellation)')),
    subject: v.pipe(SpecialEvent.entries.eventId, v.description('The eventId')),
    time: v.pipe(v.string(), v.isoTimestamp(), v.description('When the change was committed (RFC 3339, UTC)')),
    datacontenttype: v.literal('application/json'),
    data: v.strictObject({
      eventId: SpecialEvent.entries.eventId,
      version: v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.description("The number in the event's `ETag` after the change; for a deletion, the deleted version + 1"),
      ),
      event: v.pipe(v.nullable(SpecialEvent), v.description('The event after the change; `null` for a deletion')),
      previous: v.pipe(v.nullable(SpecialEvent), v.description('The event before the change; `null` for a creation')),
    }),
  }),
  v.description('A change to a special event: a CloudEvents 1.0 event in JSON (structured mode)'),
);

export const ChangeFeedPage = v.pipe(
  v.strictObject({
    changes: v.pipe(
      v.array(ChangeEvent),
      v.maxLength(LIMITS.maxChangesLimit),
      v.description(
        'The changes after `since`, in commit order, at most `limit` of them (a page may hold fewer, even none: `caughtUp` says whether more follow)',
      ),
    ),
    next: v.pipe(
      v.string(),
      v.description(
        `The cursor of what follows this page: opaque (do not parse or build one), valid for ${CHANGE_FEED.retentionDays} days; send it as \`since\``,
      ),
    ),
    caughtUp: v.pipe(
      v.boolean(),
      v.description(
        `True when this page reached the hold-back boundary (${CHANGE_FEED.holdBackMs / 1000} s before now): every change committed before it ` +
          'has been handed out; keep `next` and ask again later. False: more changes may follow now; request `next` at once',
      ),
    ),
  }),
  v.description('One page of the change feed'),
);

export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
export const schemaRef = (name: string) => ({ $ref: `${SCHEMA_REF_PREFIX}${name}` });
export const json = (schema: unknown, examples: Record<string, { summary: string; value: unknown }>) => ({
  'application/json': { schema, examples },
});
