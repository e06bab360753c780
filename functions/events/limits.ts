// Every bound the API enforces, in one dependency-free module: the schemas, the HTTP edge, the
// store, the OpenAPI document and the tests read them from here.

/**
 * The spec sets no bounds. maxDates is every day of a leap year, the longest range a list may
 * ask for (maxRangeDays): an event that runs for a season or a year. maxEventMonths (four years
 * of a monthly series) keeps every write of an event one transaction (functions/store/README.md).
 */
export const LIMITS = {
  nameLength: 200,
  locationLength: 200,
  descriptionLength: 5000,
  maxDates: 366,
  maxEventMonths: 48,
  maxPrice: 1_000_000,
  maxBodyBytes: 64 * 1024,
  maxListLimit: 30,
  defaultListLimit: 10,
  // Pages are offsets: page p reads (p - 1) * limit + limit + 1 events (index entries and
  // strongly consistent base items, ~1 RCU each), so the deepest page (1000, limit 30) reads
  // ~30,000 items, about 30,000 RCU ($0.0075 on demand) in ~300 BatchGetItem calls, ten times
  // the deepest page under the former cap of 100; a page that would outlive the 10 s timeout
  // is a 503, never a wrong page. Keyset cursors would make depth free (not done: the
  // specification's `page` parameter is an offset).
  maxListPage: 1000,
  defaultRangeDays: 7,
  maxRangeDays: 366,
  // The change feed's page (GET /special-events/changes): a page may hold fewer (functions/changes/change-feed.ts).
  maxChangesLimit: 200,
  defaultChangesLimit: 100,
  idempotencyKeyLength: 255,
  idempotencyWindowHours: 24,
} as const;

/**
 * Answers at least this large are compressed for clients that accept it (API Gateway's
 * minimumCompressionSize, mirrored by the local gateway; openapi.json is ~56 KB).
 */
export const MINIMUM_COMPRESSION_BYTES = 1024;
