// Valibot -> JSON Schema (2020-12, the dialect of OpenAPI 3.1) for the OpenAPI document. The
// converter handles types, bounds, patterns and formats itself; the few actions it cannot express
// (trim, transforms, custom checks) are mapped here one by one. An action this file does not know
// makes generation fail, so a new rule in event-schema.ts cannot silently vanish from the contract.
import { toJsonSchemaDefs, type ConversionConfig, type JsonSchema, type OverrideActionContext } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { MAX_YEAR, MIN_YEAR, normaliseDates } from '../../functions/events/calendar-dates.ts';
import type { TextRule } from '../../functions/events/text-rules.ts';
import { textRulePattern } from './text-patterns.ts';

export type { JsonSchema };

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

/** Notes folded into a schema's description after conversion (the description action would overwrite them). */
const NOTES = 'x-museum-notes';

type PipeAction = OverrideActionContext['valibotAction'];

function withNote(jsonSchema: JsonSchema, note: string): JsonSchema {
  const notes = (jsonSchema as Record<string, unknown>)[NOTES] as string[] | undefined;
  return { ...jsonSchema, [NOTES]: [...(notes ?? []), note] } as JsonSchema;
}

/** Notes for what a check's JSON Schema keywords cannot say, keyed by a keyword only that check sets. */
const CHECK_NOTES: Record<string, string> = {
  format: `A real calendar date (\`format: date\`; 2026-02-30 is not one), years ${MIN_YEAR} to ${MAX_YEAR}.`,
  multipleOf:
    'At most 2 decimal places: `multipleOf: 0.01` in exact decimal arithmetic, as JSON Schema defines it (validators that divide in binary ' +
    'floating point, such as Ajv without `multipleOfPrecision`, wrongly reject some valid prices such as 19.99).',
  minLength:
    'At least one visible character: text made only of white space and default-ignorable characters (U+200B, U+200D, U+FEFF, ' +
    'variation selectors, tags...; Unicode White_Space and Default_Ignorable_Code_Point) is empty. Never control characters (tab, ' +
    'line feed and carriage return are allowed in descriptions only), U+2028 and U+2029 (in names and locations), bidirectional ' +
    'formatting characters (Bidi_Control: U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), unpaired surrogates or U+FFFD.',
  pattern:
    'The `pattern` says this for the Basic Multilingual Plane in a form every common engine reads alike (ECMA-262 with and without ' +
    'the `u` flag, Python `re`, RE2, Rust `regex`, Java): `\\xHH` escapes and the other characters as themselves, no surrogates, no ' +
    'character outside the BMP. Two rules are left to the server: unpaired surrogates, and invisible characters outside the BMP ' +
    '(tags U+E0000 to U+E0FFF and the like), which the pattern counts as visible, so a text made only of them matches it and is still a 400. ' +
    'In Python and Java `$` also matches before a final line feed: search with `(?:pattern)\\Z` there (or fullmatch), or a trailing LF passes.',
};

/** Custom checks: those event-schema.ts documents with their JSON Schema, and the inline ones recognised by their message. */
function convertCheck(action: PipeAction & { requirement?: unknown; message?: unknown }, jsonSchema: JsonSchema): JsonSchema | undefined {
  const { jsonSchema: documented, textRule } = action as { jsonSchema?: Record<string, unknown>; textRule?: TextRule };
  if (documented) {
    const keywords = textRule ? { ...documented, pattern: textRulePattern(textRule) } : documented;
    const notes = Object.keys(keywords).flatMap((keyword) => (CHECK_NOTES[keyword] ? [CHECK_NOTES[keyword]] : []));
    return notes.reduce<JsonSchema>((schema, note) => withNote(schema, note), { ...jsonSchema, ...keywords });
  }
  if (action.message === 'must contain at least one field to change') return { ...jsonSchema, minProperties: 1 };
  return undefined;
}

function overrideAction({ valibotAction: action, jsonSchema }: OverrideActionContext): JsonSchema | undefined {
  const details = action as PipeAction & { requirement?: unknown; message?: unknown; operation?: unknown };
  switch (action.type) {
    case 'check':
      return convertCheck(details, jsonSchema);
    case 'trim':
      return withNote(
        jsonSchema,
        'Leading and trailing white space is removed; the maximum length (in Unicode code points, as JSON Schema counts) applies to the trimmed text.',
      );
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

/** Converts named valibot schemas to components.schemas entries (references between them become $refs), with their `descriptions`. */
export function componentSchemas(
  definitions: Record<string, v.GenericSchema>,
  descriptions: Record<string, string> = {},
): Record<string, JsonSchema> {
  const converted = toJsonSchemaDefs(definitions, CONVERSION_CONFIG);
  return Object.fromEntries(
    Object.entries(converted).map(([name, schema]) => [
      name,
      foldNotes(descriptions[name] ? { ...schema, description: descriptions[name] } : schema),
    ]),
  );
}

/** One schema on its own, with references to the named `definitions` where they occur. */
export function schemaWithReferences(
  schema: v.GenericSchema,
  definitions: Record<string, v.GenericSchema>,
  description?: string,
): JsonSchema {
  const converted = toJsonSchemaDefs({ ...definitions, __schema: schema }, CONVERSION_CONFIG).__schema;
  return foldNotes(description ? { ...converted, description } : converted);
}

function foldNotes(schema: JsonSchema): JsonSchema {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (!value || typeof value !== 'object') return value;
    const { [NOTES]: notes, ...rest } = value as Record<string, unknown>;
    const result = Object.fromEntries(Object.entries(rest).map(([key, child]) => [key, walk(child)]));
    if (Array.isArray(notes) && notes.length > 0) {
      const description = typeof result.description === 'string' ? result.description.replace(/([^.])$/, '$1.') : undefined;
      result.description = [description, ...(notes as unknown[])].filter(Boolean).join(' ');
    }
    return result;
  };
  return walk(schema) as JsonSchema;
}
