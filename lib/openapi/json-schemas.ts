// Valibot -> JSON Schema (2020-12, the dialect of OpenAPI 3.1) for the OpenAPI document. The
// converter handles types, bounds, patterns and formats itself; the few actions it cannot express
// (trim, transforms, custom checks) are mapped here one by one. An action this file does not know
// makes generation fail, so a new rule in event-schema.ts cannot silently vanish from the contract.
import { toJsonSchemaDefs, type ConversionConfig, type JsonSchema, type OverrideActionContext } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { isCalendarDate, MAX_YEAR, MIN_YEAR, normaliseDates } from '../../functions/shared/calendar-dates.ts';

export type { JsonSchema };

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

/** Notes folded into a schema's description after conversion (the description action would overwrite them). */
const NOTES = 'x-museum-notes';

type PipeAction = OverrideActionContext['valibotAction'];

function withNote(jsonSchema: JsonSchema, note: string): JsonSchema {
  const notes = (jsonSchema as Record<string, unknown>)[NOTES] as string[] | undefined;
  return { ...jsonSchema, [NOTES]: [...(notes ?? []), note] } as JsonSchema;
}

/** Custom checks, recognised by their requirement function or, for inline ones, their message. */
function convertCheck(action: PipeAction & { requirement?: unknown; message?: unknown }, jsonSchema: JsonSchema): JsonSchema | undefined {
  if (action.requirement === isCalendarDate) {
    return withNote({ ...jsonSchema, format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, `Years ${MIN_YEAR} to ${MAX_YEAR} only.`);
  }
  switch (action.message) {
    case 'must be well-formed Unicode':
      return withNote(jsonSchema, 'Must be well-formed Unicode (no unpaired surrogates).');
    case 'must have at most 2 decimals':
      // Not `multipleOf: 0.01`: binary floating point makes common validators reject 19.99.
      return withNote(jsonSchema, 'At most 2 decimal places.');
    case 'must contain at least one field to change':
      return { ...jsonSchema, minProperties: 1 };
  }
  return undefined;
}

function overrideAction({ valibotAction: action, jsonSchema }: OverrideActionContext): JsonSchema | undefined {
  const details = action as PipeAction & { requirement?: unknown; message?: unknown; operation?: unknown };
  switch (action.type) {
    case 'check':
      return convertCheck(details, jsonSchema);
    case 'trim':
      return withNote(jsonSchema, 'Leading and trailing white space is removed; the length bounds apply to the trimmed text.');
    case 'to_lower_case':
      return withNote(jsonSchema, 'Accepted in any case; the service returns it in lower case.');
    case 'finite':
      return jsonSchema; // JSON has no infinities
    case 'regex':
      // The `u` flag is what JSON Schema patterns (ECMA-262, Unicode-aware) mean anyway; any other flag is not expressible.
      return (details.requirement as RegExp).flags.replace('u', '') === '' ? jsonSchema : undefined;
    case 'transform':
      if (details.operation === Number) {
        // A whole-number query parameter (digits only, checked by the regex before): an integer to clients.
        const { pattern: _digits, type: _string, ...rest } = jsonSchema;
        return { ...rest, type: 'integer' };
      }
      if (details.operation === normaliseDates) return jsonSchema; // EventDates' description says it: sorted, without duplicates
      return undefined;
  }
  return undefined;
}

export const CONVERSION_CONFIG: ConversionConfig = {
  target: 'draft-2020-12',
  errorMode: 'throw',
  overrideAction,
  overrideRef: ({ referenceId }) => `${SCHEMA_REF_PREFIX}${referenceId}`,
};

/** Converts named valibot schemas to components.schemas entries (references between them become $refs). */
export function componentSchemas(definitions: Record<string, v.GenericSchema>): Record<string, JsonSchema> {
  const converted = toJsonSchemaDefs(definitions, CONVERSION_CONFIG);
  return Object.fromEntries(Object.entries(converted).map(([name, schema]) => [name, foldNotes(schema)]));
}

/** One schema on its own, with references to the named `definitions` where they occur. */
export function schemaWithReferences(schema: v.GenericSchema, definitions: Record<string, v.GenericSchema>): JsonSchema {
  const converted = toJsonSchemaDefs({ ...definitions, __schema: schema }, CONVERSION_CONFIG).__schema;
  return foldNotes(converted as JsonSchema);
}

function foldNotes(schema: JsonSchema): JsonSchema {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!value || typeof value !== 'object') return value;
    const { [NOTES]: notes, ...rest } = value as Record<string, unknown>;
    const result = Object.fromEntries(Object.entries(rest).map(([key, child]) => [key, walk(child)]));
    if (Array.isArray(notes) && notes.length > 0) {
      const description = typeof result.description === 'string' ? result.description.replace(/([^.])$/, '$1.') : undefined;
      result.description = [description, ...notes].filter(Boolean).join(' ');
    }
    return result;
  };
  return walk(schema) as JsonSchema;
}
