// Checks an end-to-end response against the API's contract. Until the OpenAPI document exists
// (issue #4), this checks the invariants every response must keep.
import type { ApiResponse } from './api-client.ts';

export function assertMatchesContract(method: string, path: string, response: ApiResponse): void {
  const contentType = response.headers.get('content-type') ?? '';
  if (response.status >= 400 && !contentType.startsWith('application/problem+json')) {
    throw new Error(`${method} ${path}: ${response.status} is not application/problem+json (${contentType})`);
  }
  if (response.status >= 500) {
    throw new Error(`${method} ${path}: unexpected ${response.status}: ${response.text}`);
  }
}
