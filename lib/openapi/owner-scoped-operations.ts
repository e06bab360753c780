// What the document says of a collection whose items each belong to one owner (webhook
// subscriptions, calendar feeds: functions/store/owner-scoped-store.ts): the list of the caller's
// items, the delete of one by its id, and that id's path parameter, 400 and 404. Each collection
// brings its own words; the shapes of these operations are built here, once for both.
import { HttpProblem } from '../../functions/events/problems.ts';
import { errorExample, problemResponse, type ProblemExample } from './problem-responses.ts';
import { gatewayTooLarge } from './request-body-responses.ts';
import type { NamedExample, OperationDetails } from './operations.ts';

export interface OwnerScopedCollection {
  /** The item's id as a path parameter: its name, what it identifies, its pattern and an example. */
  id: { name: string; description: string; pattern: RegExp; example: string };
  /** The 400 of an id that is not one (or of a query parameter): when it is answered, and the handler's problem. */
  invalidId: { description: string; example: ProblemExample };
  /** The 404 of an id the caller has no item under: when it is answered, and the handler's problem. */
  notFound: { description: string; example: ProblemExample };
}

/** A list takes no query parameter: one is a 400. */
const unknownQuery = problemResponse(400, 'A query parameter is given', {
  unknownQueryParameter: errorExample(
    new HttpProblem('validation-error', 'The query string is invalid: page not known', {
      errors: [{ field: 'page', message: 'is not a known query parameter' }],
    }),
    'An unknown query parameter',
  ),
});

/** The parts of a collection's document that its operations share, and its list and delete operations. */
export function ownerScopedCollection(collection: OwnerScopedCollection) {
  const { id } = collection;
  const idParameter = {
    name: id.name,
    in: 'path',
    required: true,
    description: id.description,
    schema: { type: 'string', pattern: id.pattern.source },
    example: id.example,
  };
  const invalidId = problemResponse(400, collection.invalidId.description, { invalidId: collection.invalidId.example });
  const notFound = problemResponse(404, collection.notFound.description, { notFound: collection.notFound.example });
  return {
    idParameter,
    invalidId,
    notFound,
    /** The caller's items: `success` says what the answer holds, with its body's schema and example. */
    list: (description: string, success: { description: string; body: { schema: string; example: NamedExample } }): OperationDetails => ({
      description,
      parameters: [],
      success,
      errors: { 400: unknownQuery, 413: gatewayTooLarge },
      mockHeaders: {},
    }),
    /** Deletes one of the caller's items, by its id. */
    remove: (description: string): OperationDetails => ({
      description,
      parameters: [idParameter],
      success: { description: 'Success - no content' },
      errors: { 400: invalidId, 404: notFound, 413: gatewayTooLarge },
      mockHeaders: {},
    }),
  };
}
