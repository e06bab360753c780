// The HttpProblem a validation step throws, for unit tests that inspect its fields.
import { HttpProblem } from '../../functions/events/problems.ts';

export function problemOf(run: () => unknown): HttpProblem {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    throw error;
  }
  throw new Error('expected a problem');
}
