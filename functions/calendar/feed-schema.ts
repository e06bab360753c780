// The calendar feed operations' requests and answers: the handlers validate with these schemas
// and the OpenAPI document is generated from them (lib/openapi/calendar-operations.ts).
import * as v from 'valibot';
import { obeysTextRule, SINGLE_LINE_TEXT, textRuleViolation } from '../events/text-rules.ts';
import { FEED_ID_PATTERN } from './feed-rules.ts';

export const FEED_LABEL_LENGTH = 100;

export const FeedLabel = v.pipe(
  v.string('must be a string'),
  v.check(
    (input: string) => obeysTextRule(SINGLE_LINE_TEXT, input),
    (issue) => textRuleViolation(SINGLE_LINE_TEXT, issue.input),
  ),
  v.trim(),
  v.minLength(1, 'must not be blank'),
  v.maxLength(FEED_LABEL_LENGTH, `must be at most ${FEED_LABEL_LENGTH} characters`),
);

/** POST /calendar-feeds: an optional label that tells the owner's feeds apart (`Phone`, `Family calendar`). */
export const CreateFeedRequest = v.strictObject({ label: v.optional(FeedLabel) }, 'must be a JSON object');

export const FeedPathParameters = v.object(
  { feedId: v.pipe(v.string(), v.regex(FEED_ID_PATTERN, 'must be a calendar feed id (cf_…)')) },
  'must name a calendar feed',
);

/** GET /calendar.ics: the token alone (its pattern is checked by the handler, which answers every bad token alike). */
export const FeedQuery = v.strictObject({ token: v.pipe(v.string(), v.maxLength(200, 'is not a calendar feed token')) });

/** A feed as its owner lists it: never its token, which was shown once, on creation. */
export interface FeedView {
  id: string;
  label?: string;
  createdAt: string;
}

/** The 201 answer: the view and the address a calendar app subscribes to (the only time it is shown). */
export interface CreatedFeed extends FeedView {
  url: string;
}
