// The document's parameters (components.parameters): the event id in the path, the If-Match,
// If-None-Match and Idempotency-Key headers, and the list's query parameters, whose schemas come
// from the very valibot schema the list handler validates its query string with.
import { LAST_DATE } from '../../functions/events/calendar-dates.ts';
import { ListChangesQuery, ListEventsQuery, SCHEMA_DESCRIPTIONS } from '../../functions/events/event-schema.ts';
import { CHANGE_FEED } from '../../functions/changes/change-feed.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { IF_MATCH_PATTERN } from '../../functions/http/preconditions.ts';
import { EVENT_SCHEMAS, schemaRef } from './document-schemas.ts';
import { exampleEvent } from './examples.ts';
import { schemaWithReferences, type JsonSchema } from './json-schemas.ts';
import { IF_NONE_MATCH_PARAMETER } from './read-semantics.ts';

/** Descriptions and defaults of the list query parameters; typed so a new parameter must be described here. */
const LIST_PARAMETERS: Record<
  keyof typeof ListEventsQuery.entries,
  { name: string; description: string; default?: number; example: unknown }
> = {
  startDate: {
    name: 'StartDate',
    description: "Start of the date range (inclusive). Defaults to today's date in the museum's time zone.",
    example: '2031-05-01',
  },
  endDate: {
    name: 'EndDate',
    description:
      `End of the date range (inclusive) for which events are retrieved. Defaults to ${LIMITS.defaultRangeDays} days after \`startDate\`, ` +
      `but never later than ${LAST_DATE} (the last supported date); must not be before \`startDate\` nor more than ${LIMITS.maxRangeDays} days after it.`,
    example: '2031-05-08',
  },
  page: { name: 'Page', description: `Page number to retrieve (at most ${LIMITS.maxListPage})`, default: 1, example: 2 },
  limit: {
    name: 'Limit',
    description: `Number of events per page (at most ${LIMITS.maxListLimit})`,
    default: LIMITS.defaultListLimit,
    example: LIMITS.defaultListLimit,
  },
};

/** components.parameters: the path, header and query parameters of every operation. */
export function parameters(): Record<string, unknown> {
  const query = Object.fromEntries(
    Object.entries(ListEventsQuery.entries).map(([name, optional]) => {
      const described = LIST_PARAMETERS[name as keyof typeof LIST_PARAMETERS];
      const named = Object.entries(EVENT_SCHEMAS).find(([, schema]) => schema === optional.wrapped)?.[0];
      const schema: JsonSchema = schemaWithReferences(optional.wrapped, EVENT_SCHEMAS, named && SCHEMA_DESCRIPTIONS[named]);
      return [
        described.name,
        {
          name,
          in: 'query',
          required: false,
          description: described.description,
          schema: described.default === undefined ? schema : { ...schema, default: described.default },
          example: described.example,
        },
      ];
    }),
  );
  return {
    EventId: {
      name: 'eventId',
      in: 'path',
      required: true,
      description: 'Identifier of the event',
      schema: schemaRef('EventId'),
      example: exampleEvent.eventId,
    },
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'RFC 9110 `If-Match`: `*`, or a comma-separated list of entity-tags (`"3"`, `"3", "4"`; an opaque tag may contain commas). ' +
        'The request applies only if a listed strong tag equals the current `ETag` character for character (`"03"` is not `"3"`, and a ' +
        'version beyond 2^53 - 1 is never one of ours); weak tags (`W/"3"`) never match, and an empty field matches nothing: both are a 412. ' +
        '`*` or no header: any current representation. Evaluated before `If-None-Match`; several `If-Match` lines form one list. ' +
        'A value outside this grammar is a 400 on every operation. No operation requires a precondition, so none answers 428.',
      schema: { type: 'string', pattern: IF_MATCH_PATTERN },
      example: '"3"',
    },
    IfNoneMatch: IF_NONE_MATCH_PARAMETER,
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: `A unique key per intended write (a UUID, say): a creation, an update or a deletion. Keys are kept per user and operation for ${LIMITS.idempotencyWindowHours} hours.`,
      schema: { type: 'string', minLength: 1, maxLength: LIMITS.idempotencyKeyLength },
      example: '5b0e8c4f-1d7a-4a59-9d0c-3c2f8f6b1e21',
    },
    ...query,
    ...changeFeedParameters(),
  };
}

/** The change feed's query parameters, their schemas from the schema its handler validates with. */
function changeFeedParameters(): Record<string, unknown> {
  const schema = (name: keyof typeof ListChangesQuery.entries) =>
    schemaWithReferences(ListChangesQuery.entries[name].wrapped, EVENT_SCHEMAS);
  return {
    Since: {
      name: 'since',
      in: 'query',
      required: false,
      description:
        'Where to start: a `next` cursor of an earlier page (opaque: send it as it was given), or `now` for no changes and a cursor for ' +
        `what follows. Without it, the feed starts at the oldest change it keeps (${CHANGE_FEED.retentionDays} days). A cursor older than that is a 410.`,
      schema: schema('since'),
      example: 'now',
    },
    ChangesLimit: {
      name: 'limit',
      in: 'query',
      required: false,
      description: `At most this many changes in the page (at most ${LIMITS.maxChangesLimit}); a page may hold fewer`,
      schema: { ...schema('limit'), default: LIMITS.defaultChangesLimit },
      example: LIMITS.defaultChangesLimit,
    },
  };
}
