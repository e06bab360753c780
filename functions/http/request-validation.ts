// Request validation at the edge: bodies, path parameters and query strings checked against the
// valibot schemas, every failure one 400 problem listing each field. Free of middy and the SDK, so
// the OpenAPI generator builds its examples with the very same functions.
import * as v from 'valibot';
import { HttpProblem, type FieldError } from '../events/problems.ts';
import type { HttpEvent } from './http.ts';

/** Validates `input` with a valibot schema; failures become one 400 problem listing every field. */
export function validate<const TSchema extends v.GenericSchema>(schema: TSchema, input: unknown, what: string): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const errors: FieldError[] = result.issues.map((issue) => {
    const field = v.getDotPath(issue) ?? '';
    if (issue.kind === 'schema' && (issue.type === 'strict_object' || issue.type === 'object') && issue.path?.length) {
      // An unknown property: say so plainly (and why, for the one clients most often send).
      if (issue.expected === 'never') {
        return {
          field,
          message:
            field === 'eventId'
              ? 'is assigned by the service and cannot be sent'
              : `is not a known ${what === 'query string' ? 'query parameter' : 'field'}${field ? '' : ' (the empty name "")'}`,
        };
      }
      if (issue.received === 'undefined') return { field, message: 'is required' };
    }
    return { field, message: issue.message };
  });
  const summary = errors.map((e) => (e.field ? `${e.field} ${e.message}` : e.message)).join('; ');
  throw new HttpProblem('validation-error', `The ${what} is invalid: ${summary}`, { errors });
}

/** The operations on one event and POST take no query parameters: any is a 400, as an unknown one is for the list. */
export function noQueryParameters(event: Pick<HttpEvent, 'queryStringParameters'>): void {
  const errors = Object.keys(event.queryStringParameters ?? {}).map((field): FieldError => ({
    field,
    message: 'is not a known query parameter',
  }));
  if (errors.length > 0)
    throw new HttpProblem('validation-error', `The query string is invalid: ${errors.map((e) => e.field).join(', ')} not known`, {
      errors,
    });
}

/**
 * The query string, validated against `schema` (a strict object: unknown parameters are 400).
 * A parameter given more than once is a 400 too: which value would count is anyone's guess.
 */
export function validateQuery<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  event: Pick<HttpEvent, 'queryStringParameters' | 'multiValueQueryStringParameters'>,
): v.InferOutput<TSchema> {
  const repeated = Object.entries(event.multiValueQueryStringParameters ?? {})
    .filter(([, values]) => (values?.length ?? 0) > 1)
    .map(([name]): FieldError => ({ field: name, message: 'must be given at most once' }));
  if (repeated.length > 0) {
    throw new HttpProblem(
      'validation-error',
      `The query string is invalid: ${repeated.map((e) => e.field).join(', ')} given more than once`,
      {
        errors: repeated,
      },
    );
  }
  return validate(schema, event.queryStringParameters ?? {}, 'query string');
}
