// What the document says about the calendar feed operations (functions/calendar/): creating,
// listing and revoking a secret address, and the iCalendar answer at that address. The JSON
// schemas are written here: the answers are built by the handlers from TypeScript types
// (functions/calendar/feed-schema.ts), the request's rules restated from the valibot schema there.
import {
  CALENDAR_FEEDS,
  CalendarFeedLimitError,
  CalendarFeedNotFoundError,
  CalendarFeedThrottledError,
  FEED_ID_PATTERN,
  FEED_TOKEN_PATTERN,
  UnknownFeedTokenError,
} from '../../functions/calendar/feed-rules.ts';
import { FEED_LABEL_LENGTH } from '../../functions/calendar/feed-schema.ts';
import { CALENDAR_MEDIA_TYPE } from '../../functions/calendar/ics.ts';
import { HttpProblem } from '../../functions/events/problems.ts';
import { json, parameterRef, schemaRef } from './document-schemas.ts';
import { ownerScopedCollection } from './owner-scoped-operations.ts';
import { errorExample, HEADER_REFS, problemResponse } from './problem-responses.ts';
import { notModifiedResponse, readSuccessHeaders } from './read-semantics.ts';
import { bodyTooLarge, gatewayTooLarge, unsupportedMediaType } from './request-body-responses.ts';
import type { OperationDetails } from './operations.ts';

const exampleId = 'cf_Q2FsZW5kYXJGZWVkSWQxMg';
const exampleToken = 'p7Rk2mVq9XwLs4NcTb8YhZ1uJe6GdA3fKoW5iBnEtQy';
const exampleCreatedAt = '2031-04-01T09:30:00.000Z';
const exampleUrl = `https://api.museum.example/v1.1/calendar.ics?token=${exampleToken}`;

const tokenParameter = {
  name: 'token',
  in: 'query',
  required: true,
  description:
    'The secret of the feed, as the `url` of its creation holds it. Whoever has the address can read the calendar (of public events): revoke the feed to end it.',
  schema: { type: 'string', pattern: FEED_TOKEN_PATTERN.source },
  example: exampleToken,
};

const feedProperties = {
  id: { type: 'string', pattern: FEED_ID_PATTERN.source },
  label: { type: 'string', minLength: 1, maxLength: FEED_LABEL_LENGTH, description: 'What the owner calls it' },
  createdAt: { type: 'string', format: 'date-time' },
};

/** components.schemas of the calendar feed operations. */
export const CALENDAR_SCHEMAS = {
  CreateCalendarFeedRequest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      label: {
        type: 'string',
        minLength: 1,
        maxLength: FEED_LABEL_LENGTH,
        description: "A name that tells the caller's feeds apart (one line, trimmed)",
      },
    },
  },
  CreatedCalendarFeed: {
    type: 'object',
    required: ['id', 'createdAt', 'url'],
    properties: {
      ...feedProperties,
      url: {
        type: 'string',
        format: 'uri',
        description: 'The address to subscribe to in a calendar app (its `token` is shown only in this answer)',
      },
    },
  },
  CalendarFeed: { type: 'object', required: ['id', 'createdAt'], properties: feedProperties },
  CalendarFeedList: {
    type: 'object',
    required: ['feeds'],
    properties: { feeds: { type: 'array', items: schemaRef('CalendarFeed') } },
  },
};

const exampleCalendar = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//museum.example//special-events//EN',
  'NAME:Museum special events',
  'X-WR-CALNAME:Museum special events',
  'REFRESH-INTERVAL;VALUE=DURATION:PT1H',
  'X-PUBLISHED-TTL:PT1H',
  'BEGIN:VEVENT',
  'UID:6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90-20310512@special-events',
  'SEQUENCE:3',
  'DTSTAMP:20310401T093000Z',
  'DTSTART;VALUE=DATE:20310512',
  'DTEND;VALUE=DATE:20310513',
  'SUMMARY:Night at the museum',
  'LOCATION:Main hall',
  'DESCRIPTION:A guided tour after closing time',
  'URL;VALUE=URI:https://api.museum.example/v1.1/special-events/6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90',
  'STATUS:CANCELLED',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

const feeds = ownerScopedCollection({
  id: { name: 'feedId', description: 'Identifier of the calendar feed', pattern: FEED_ID_PATTERN, example: exampleId },
  invalidId: {
    description: '`feedId` is not a feed id, or a query parameter is given',
    example: errorExample(
      new HttpProblem('validation-error', 'The calendar feed id is invalid: feedId must be a calendar feed id (cf_…)', {
        errors: [{ field: 'feedId', message: 'must be a calendar feed id (cf_…)' }],
      }),
      'Not a feed id',
    ),
  },
  notFound: {
    description: 'The caller has no feed with this id',
    example: errorExample(new CalendarFeedNotFoundError(exampleId), 'No such feed'),
  },
});

const personal = 'Feeds are personal: each user sees and revokes only their own, whatever their role.';

export const CALENDAR_OPERATIONS = {
  createCalendarFeed: {
    description:
      'Makes a secret address for a calendar app (Google Calendar "From URL", Apple Calendar "New Calendar Subscription", Outlook "Subscribe from web"): ' +
      "the upcoming dates of every event, and dates cancelled within the change feed's retention. The address holds a 256-bit token, shown only in this answer; " +
      `the service keeps a keyed hash of it. A user may have at most ${CALENDAR_FEEDS.perOwner} feeds. ${personal}`,
    parameters: [],
    requestBody: {
      required: true,
      content: json(schemaRef('CreateCalendarFeedRequest'), {
        labelled: { summary: 'With a label', value: { label: 'Phone' } },
        plain: { summary: 'Without a label', value: {} },
      }),
    },
    success: {
      description: 'Created: the feed and the address to subscribe to',
      headers: {
        Location: {
          description: 'Path of the created feed (for DELETE)',
          required: true,
          schema: { type: 'string', format: 'uri-reference', examples: [`/v1.1/calendar-feeds/${exampleId}`] },
        },
      },
      body: {
        schema: 'CreatedCalendarFeed',
        example: {
          name: 'created',
          summary: 'A new feed',
          value: { id: exampleId, label: 'Phone', createdAt: exampleCreatedAt, url: exampleUrl },
        },
      },
    },
    errors: {
      400: problemResponse(400, 'The body is not a JSON object with an optional one-line `label`', {
        invalidBody: errorExample(
          new HttpProblem('validation-error', 'The request body is invalid: label must not be blank', {
            errors: [{ field: 'label', message: 'must not be blank' }],
          }),
          'A blank label',
        ),
      }),
      409: problemResponse(409, `The caller has ${CALENDAR_FEEDS.perOwner} feeds already`, {
        limit: errorExample(new CalendarFeedLimitError(), 'Too many feeds'),
      }),
      413: bodyTooLarge,
      415: unsupportedMediaType,
    },
    mockHeaders: { Location: `calendar-feeds/${exampleId}` },
  },
  listCalendarFeeds: feeds.list(`Lists the caller's calendar feeds, oldest first, without their addresses. ${personal}`, {
    description: 'Success: the feeds',
    body: {
      schema: 'CalendarFeedList',
      example: { name: 'list', summary: 'One feed', value: { feeds: [{ id: exampleId, label: 'Phone', createdAt: exampleCreatedAt }] } },
    },
  }),
  deleteCalendarFeed: feeds.remove(`Revokes a feed: its address answers 404 from the next request on. ${personal}`),
  getCalendarFeed: {
    description:
      "The calendar of a feed, for calendar apps: no credentials, the `token` is the key. One all-day `VEVENT` (RFC 5545) per date of every event from the museum's today " +
      `to ${CALENDAR_FEEDS.horizonDays} days on (at most ${CALENDAR_FEEDS.maxEvents} events), with a \`UID\` that stays the same for an event's date, \`SEQUENCE\` from the event's version, ` +
      "`DTSTAMP` its last change, `SUMMARY`, `LOCATION`, `DESCRIPTION` and `URL` (the event's resource). A date that a change took away (a `PATCH` without it, a `DELETE` of its event) " +
      "within the change feed's retention stays, with `STATUS:CANCELLED` and a higher `SEQUENCE`, until it has passed, so subscribed calendars drop or mark it instead of keeping it. " +
      `Poll with \`If-None-Match\`: an unchanged calendar is a 304. Each feed may be fetched ${CALENDAR_FEEDS.requestsPerWindow} times an hour (304s included); beyond, a 429 with \`Retry-After\`.`,
    parameters: [tokenParameter, parameterRef('IfMatch'), parameterRef('IfNoneMatch')],
    success: {
      description: 'Success: the calendar',
      headers: readSuccessHeaders('ContentETag'),
      content: {
        [CALENDAR_MEDIA_TYPE]: {
          schema: { type: 'string' },
          examples: { calendar: { summary: 'One cancelled date', value: exampleCalendar } },
        },
      },
    },
    errors: {
      304: notModifiedResponse('ContentETag'),
      400: problemResponse(400, '`token` is missing or given twice, or another query parameter is given', {
        missingToken: errorExample(
          new HttpProblem('validation-error', 'The query string is invalid: token is required', {
            errors: [{ field: 'token', message: 'is required' }],
          }),
          'No token',
        ),
      }),
      404: problemResponse(404, 'No feed has this token: it was revoked, or it is not one the API handed out', {
        unknownToken: errorExample(new UnknownFeedTokenError(), 'A revoked or unknown token'),
      }),
      413: gatewayTooLarge,
      429: problemResponse(
        429,
        `This feed was fetched ${CALENDAR_FEEDS.requestsPerWindow} times this hour (or API Gateway throttled the method): retry after \`Retry-After\` seconds`,
        { feedThrottled: errorExample(new CalendarFeedThrottledError(1200), 'A feed polled too often') },
        { 'Retry-After': HEADER_REFS.RetryAfter },
      ),
    },
    mockHeaders: {},
  },
} satisfies Record<string, OperationDetails>;
