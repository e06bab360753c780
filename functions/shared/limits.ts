// Every bound the API enforces, in one dependency-free module: the schemas, the HTTP edge, the
// store, the OpenAPI document and the tests read them from here.

/**
 * The spec sets no bounds. maxDates follows from DynamoDB: every write of an event and its
 * per-date index items is one TransactWriteItems call (at most 100 actions), and a PATCH that
 * replaces all dates deletes the old entries and writes the new ones: 1 + 49 + 49 <= 100 (with an
 * Idempotency-Key, a create writes 1 + 49 + 1).
 */
export const LIMITS = {
  nameLength: 200,
  locationLength: 200,
  descriptionLength: 5000,
  maxDates: 49,
  maxPrice: 1_000_000,
  maxBodyBytes: 64 * 1024,
  maxListLimit: 30,
  defaultListLimit: 10,
  maxListPage: 100,
  defaultRangeDays: 7,
  maxRangeDays: 366,
  idempotencyKeyLength: 255,
  idempotencyWindowHours: 24,
} as const;
