// The one definition of a special event: the handlers validate with these schemas, the types
// below are inferred from them, and the OpenAPI document is generated from them.
import * as v from 'valibot';
import { CALENDAR_DATE_PATTERN, isCalendarDate, normaliseDates } from './calendar-dates.ts';
import { compareDecimal, decimalPlaces, JsonNumberText } from './decimal-text.ts';
import type { EventField } from './event-fields.ts';
import { LIMITS } from './limits.ts';
import { codePointLength, MULTI_LINE_TEXT, obeysTextRule, SINGLE_LINE_TEXT, textRuleViolation, type TextRule } from './text-rules.ts';

/** What each schema is, for the OpenAPI document: prose no handler reads, so it stays out of the bundles. */
export const SCHEMA_DESCRIPTIONS: Record<string, string> = {
  EventId: 'Identifier of the event, assigned by the service',
  EventName: 'Name of the event',
  EventLocation: 'Where the event takes place',
  EventDescription: 'Description of the event',
  CalendarDate: 'A calendar date, YYYY-MM-DD',
  EventDates: 'Dates on which the event takes place; stored sorted, without duplicates',
  EventPrice: 'Price of the event',
};

/**
 * A custom check that carries what it means in JSON Schema (and, for text, its rule), read by
 * the OpenAPI generator (lib/openapi/json-schemas.ts), so each rule is written once. Free of side
 * effects, so a bundle that does not use a schema drops it.
 */
/* @__NO_SIDE_EFFECTS__ */
function documentedCheck<T>(
  requirement: (input: T) => boolean,
  message: v.ErrorMessage<v.CheckIssue<T>>,
  jsonSchema: Record<string, unknown>,
  textRule?: TextRule,
) {
  return Object.assign(v.check(requirement, message), { jsonSchema, textRule });
}

/** JSON Schema's maxLength counts code points, so the API does too (an emoji is one character, not two). */
/* @__NO_SIDE_EFFECTS__ */
function maxCodePoints(maxLength: number) {
  return documentedCheck((input: string) => codePointLength(input) <= maxLength, `must be at most ${maxLength} characters`, { maxLength });
}

/* @__NO_SIDE_EFFECTS__ */
function textField(maxLength: number, rule: TextRule) {
  return v.pipe(
    v.string('must be a string'),
    documentedCheck(
      (input: string) => obeysTextRule(rule, input),
      (issue) => textRuleViolation(rule, issue.input),
      { minLength: 1 },
      rule,
    ),
    v.trim(),
    maxCodePoints(maxLength),
  );
}

export const EventName = textField(LIMITS.nameLength, SINGLE_LINE_TEXT);
export const EventLocation = textField(LIMITS.locationLength, SINGLE_LINE_TEXT);
export const EventDescription = textField(LIMITS.descriptionLength, MULTI_LINE_TEXT);

export const CalendarDate = v.pipe(
  v.string('must be a string'),
  documentedCheck(isCalendarDate, 'must be a real calendar date written YYYY-MM-DD (years 1900 to 9999)', {
    format: 'date',
    pattern: CALENDAR_DATE_PATTERN,
  }),
);

export const EventDates = v.pipe(
  v.array(CalendarDate, 'must be an array of dates'),
  v.minLength(1, 'must hold at least one date'),
  v.maxLength(LIMITS.maxDates, `must hold at most ${LIMITS.maxDates} dates`),
  v.transform(normaliseDates),
);

/** What is wrong with a price sent as a number no double holds exactly, judged on its text by the rules of EventPrice. */
function priceTextProblem(source: string): string {
  if (compareDecimal(source, 0) < 0) return 'must not be negative';
  if (compareDecimal(source, LIMITS.maxPrice) > 0) return `must be at most ${LIMITS.maxPrice}`;
  return 'must have at most 2 decimals'; // every price within the bounds with at most 2 decimals is held exactly
}

export const EventPrice = v.pipe(
  v.number((issue) => (issue.input instanceof JsonNumberText ? priceTextProblem(issue.input.source) : 'must be a number')),
  v.finite('must be a finite number'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(LIMITS.maxPrice, `must be at most ${LIMITS.maxPrice}`),
  // Judged on the number's decimal text, as JSON Schema's multipleOf (exact decimal arithmetic)
  // judges the JSON number sent: a double is its shortest round-trip text (0.1 + 0.2 is
  // 0.30000000000000004: 17 decimals), and a body's number that no double holds exactly reaches
  // this schema as its text (a JsonNumberText, refused above with the same rules).
  documentedCheck((price: number) => decimalPlaces(String(price)) <= 2, 'must have at most 2 decimals', { multipleOf: 0.01 }),
);

export const EventId = v.pipe(v.string('must be a string'), v.uuid('must be a UUID'), v.toLowerCase());

/** The schema of each field; `satisfies` holds it to EVENT_FIELDS: no field missing, none extra. */
const eventFields = {
  name: EventName,
  location: EventLocation,
  eventDescription: EventDescription,
  dates: EventDates,
  price: EventPrice,
} satisfies Record<EventField, v.GenericSchema>;

export const CreateEventRequest = v.strictObject(eventFields, 'must be a JSON object');

/** Any of the fields, each validated as on create. */
export const UpdateEventRequest = v.pipe(
  v.partial(CreateEventRequest),
  v.check((changes) => Object.keys(changes).length > 0, 'must contain at least one field to change'),
);

function integerParameter(min: number, max: number) {
  return v.pipe(
    v.string(),
    v.regex(/^[0-9]+$/, 'must be a whole number'),
    v.transform(Number), // a long run of digits becomes a large number or Infinity: "at most max", not "not a whole number"
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
}

/** Query string of GET /special-events; defaults and cross-field rules are in list-special-events.ts (parseListQuery). */
export const ListEventsQuery = v.strictObject({
  startDate: v.optional(CalendarDate),
  endDate: v.optional(CalendarDate),
  page: v.optional(integerParameter(1, LIMITS.maxListPage)),
  limit: v.optional(integerParameter(1, LIMITS.maxListLimit)),
});

/** Query string of GET /special-events/changes; the cursor in `since` is decoded in list-special-event-changes.ts. */
export const ListChangesQuery = v.strictObject({
  since: v.optional(v.pipe(v.string(), v.regex(/^(now|[A-Za-z0-9_-]{1,200})$/, 'must be `now` or a cursor from a `next` of this feed'))),
  limit: v.optional(integerParameter(1, LIMITS.maxChangesLimit)),
});

export const SpecialEvent = v.strictObject({
  eventId: EventId,
  ...eventFields,
});

export type SpecialEvent = v.InferOutput<typeof SpecialEvent>;
export type NewSpecialEvent = v.InferOutput<typeof CreateEventRequest>;
export type SpecialEventChanges = v.InferOutput<typeof UpdateEventRequest>;

export const EventPathParameters = v.object({ eventId: EventId }, 'must name an event');
