// Calendar feeds' rules, free of the AWS SDK (the CDK app reads the keys for IAM): the limits,
// the item keys and the problems. Key design: functions/store/README.md, "Calendar feeds".
import { randomBytes } from 'node:crypto';
import { HttpProblem } from '../events/problems.ts';

/**
 * - perOwner: feeds one user may hold (a phone, a laptop, a shared family calendar, ...).
 * - requestsPerWindow / windowSeconds: what one feed may be fetched, 304s included. Calendar apps
 *   poll every 5 minutes (Apple, at its shortest) to a day (Google): 60 an hour is a dozen devices
 *   at Apple's shortest interval; the 61st request of an hour is a 429 with Retry-After.
 * - horizonDays: the dates a feed lists, from the museum's today on (the list's longest range).
 * - maxEvents: the events a feed lists at most (those with the earliest dates first).
 * - refreshSeconds: the refresh interval the feed suggests (REFRESH-INTERVAL, X-PUBLISHED-TTL).
 */
export const CALENDAR_FEEDS = {
  perOwner: 10,
  requestsPerWindow: 60,
  windowSeconds: 3600,
  horizonDays: 366,
  maxEvents: 500,
  refreshSeconds: 3600,
} as const;

/** A feed's token: 32 random bytes (256 bits), base64url without padding: 43 characters. */
export const FEED_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A feed's id: `cf_` and 16 random bytes, base64url. */
export const FEED_ID_PATTERN = /^cf_[A-Za-z0-9_-]{22}$/;

export function newFeedId(): string {
  return `cf_${randomBytes(16).toString('base64url')}`;
}

export function newFeedToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The items, all in `CALENDAR#` partitions (the calendar functions' IAM LeadingKeys):
 * - feed: the token's keyed hash is the key (the token itself is stored nowhere); what the GET reads.
 * - requests: one counter per feed and window, expiring by TTL (the table's `expiresAt`).
 * - ownerEntry / ownerCount: the owner's feeds (list, revoke) and their number (the cap).
 */
export const CALENDAR_KEYS = {
  leadingKeys: ['CALENDAR#*'],
  feed: (tokenHash: string) => ({ pk: `CALENDAR#FEED#${tokenHash}`, sk: 'FEED' }),
  requests: (tokenHash: string, windowStart: number) => ({ pk: `CALENDAR#FEED#${tokenHash}`, sk: `REQUESTS#${windowStart}` }),
  ownerPartition: (owner: string) => `CALENDAR#OWNER#${owner}`,
  ownerEntry: (owner: string, feedId: string) => ({ pk: `CALENDAR#OWNER#${owner}`, sk: `FEED#${feedId}` }),
  ownerCount: (owner: string) => ({ pk: `CALENDAR#OWNER#${owner}`, sk: 'COUNT' }),
};

export class CalendarFeedNotFoundError extends HttpProblem {
  override name = 'CalendarFeedNotFoundError';
  constructor(id: string) {
    super('not-found', `You have no calendar feed with the id ${id}`);
  }
}

/** An unknown, malformed or revoked token: one answer for all, so a guess learns nothing. */
export class UnknownFeedTokenError extends HttpProblem {
  override name = 'UnknownFeedTokenError';
  constructor() {
    super('not-found', 'No calendar feed has this address: it was revoked, or it is not one the API handed out');
  }
}

export class CalendarFeedLimitError extends HttpProblem {
  override name = 'CalendarFeedLimitError';
  constructor() {
    super('calendar-feed-limit', `A user may have at most ${CALENDAR_FEEDS.perOwner} calendar feeds; revoke one first`);
  }
}

export class CalendarFeedThrottledError extends HttpProblem {
  override name = 'CalendarFeedThrottledError';
  constructor(retryAfterSeconds: number) {
    super(
      'too-many-requests',
      `This calendar feed was fetched ${CALENDAR_FEEDS.requestsPerWindow} times within ${CALENDAR_FEEDS.windowSeconds / 60} minutes; retry after ${retryAfterSeconds} seconds`,
      { headers: { 'Retry-After': String(retryAfterSeconds) } },
    );
  }
}
