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

export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
export const schemaRef = (name: string) => ({ $ref: `${SCHEMA_REF_PREFIX}${name}` });
export const json = (schema: unknown, examples: Record<string, { summary: string; value: unknown }>) => ({
  'application/json': { schema, examples },
});
