// The one definition of a special event: the handlers validate with these schemas, the types
// below are inferred from them, and the OpenAPI document is generated from them.
import * as v from 'valibot';
import { isCalendarDate, normaliseDates } from './calendar-dates.ts';
import { LIMITS } from './limits.ts';

const noControlCharacters = /^[^\p{Cc}]*$/u;
const noControlCharactersButLineBreaksAndTabs = /^(?:[^\p{Cc}]|[\t\n\r])*$/u;

// Lone surrogates survive JSON.parse but are not valid UTF-8, which DynamoDB rejects.
const wellFormed = v.check((value: string) => value.isWellFormed(), 'must be well-formed Unicode');

function text(maxLength: number, allowed: RegExp, description: string) {
  return v.pipe(
    v.string('must be a string'),
    wellFormed,
    v.regex(allowed, 'must not contain control characters'),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(maxLength, `must be at most ${maxLength} characters`),
    v.description(description),
  );
}

export const EventName = text(LIMITS.nameLength, noControlCharacters, 'Name of the event');
export const EventLocation = text(LIMITS.locationLength, noControlCharacters, 'Where the event takes place');
export const EventDescription = text(
  LIMITS.descriptionLength,
  noControlCharactersButLineBreaksAndTabs,
  'Description of the event',
);

export const CalendarDate = v.pipe(
  v.string('must be a string'),
  v.check(isCalendarDate, 'must be a real calendar date written YYYY-MM-DD'),
  v.description('A calendar date, YYYY-MM-DD'),
);

export const EventDates = v.pipe(
  v.array(CalendarDate, 'must be an array of dates'),
  v.minLength(1, 'must hold at least one date'),
  v.maxLength(LIMITS.maxDates, `must hold at most ${LIMITS.maxDates} dates`),
  v.transform(normaliseDates),
  v.description('Dates on which the event takes place; stored sorted, without duplicates'),
);

export const EventPrice = v.pipe(
  v.number('must be a number'),
  v.finite('must be a finite number'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(LIMITS.maxPrice, `must be at most ${LIMITS.maxPrice}`),
  // Exact: a whole number of cents divided by 100 gives back the very double JSON.parse made of
  // a 2-decimal literal. A tolerance let 1e-323 through (DynamoDB: "Number underflow", a 500)
  // and stored 0.30000000000000004 as sent.
  v.check((price: number) => Math.round(price * 100) / 100 === price, 'must have at most 2 decimals'),
  v.description('Price of the event'),
);

export const EventId = v.pipe(
  v.string('must be a string'),
  v.uuid('must be a UUID'),
  v.toLowerCase(),
  v.description('Identifier of the event, assigned by the service'),
);

const eventFields = {
  name: EventName,
  location: EventLocation,
  eventDescription: EventDescription,
  dates: EventDates,
  price: EventPrice,
};

export const CreateEventRequest = v.strictObject(eventFields, 'must be a JSON object');

export const UpdateEventRequest = v.pipe(
  v.strictObject(
    {
      name: v.optional(EventName),
      location: v.optional(EventLocation),
      eventDescription: v.optional(EventDescription),
      dates: v.optional(EventDates),
      price: v.optional(EventPrice),
    },
    'must be a JSON object',
  ),
  v.check((changes) => Object.keys(changes).length > 0, 'must contain at least one field to change'),
);

function integerParameter(min: number, max: number) {
  return v.pipe(
    v.string(),
    v.regex(/^\d{1,6}$/, 'must be a whole number'),
    v.transform(Number),
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

export const SpecialEvent = v.strictObject({
  eventId: EventId,
  ...eventFields,
});

export type SpecialEvent = v.InferOutput<typeof SpecialEvent>;
export type NewSpecialEvent = v.InferOutput<typeof CreateEventRequest>;
export type SpecialEventChanges = v.InferOutput<typeof UpdateEventRequest>;

export const EventPathParameters = v.object({ eventId: EventId }, 'must name an event');
