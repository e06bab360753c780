// The OpenAPI side of functions/http/read-responses.ts and the list's paging links: the
// validator, caching and paging headers of GET answers, If-None-Match and its 304, and the
// paragraph of the API description that says how clients use them.
import { LIMITS } from '../../functions/events/limits.ts';
import { IF_MATCH_PATTERN } from '../../functions/http/preconditions.ts';
import { READ_CACHE_CONTROL, READ_VARY } from '../../functions/http/read-responses.ts';
import { CORS_EXPOSED_HEADERS } from '../../functions/routes.ts';

export const READ_HEADERS = {
  ContentETag: {
    description:
      'Strong entity tag of this exact body (a hash of its bytes): send it in `If-None-Match` to get a 304 while the answer is unchanged',
    required: true,
    schema: { type: 'string', pattern: '^"[A-Za-z0-9_-]{22}"$', examples: ['"mC3y0lE2G1xWq9v8b7n6aA"'] },
  },
  CacheControl: {
    description:
      'Authenticated content: `private` keeps it out of shared caches, `no-cache` lets a browser or kiosk keep a copy but revalidate it (`If-None-Match`) before each use',
    required: true,
    schema: { type: 'string', const: READ_CACHE_CONTROL },
  },
  Vary: {
    description:
      'The answer depends on the credentials (roles) and, with CORS, on the Origin; an answer that may be compressed (1 KiB or more) also varies with Accept-Encoding',
    required: true,
    schema: { type: 'string', enum: [READ_VARY.join(', '), `${READ_VARY.join(', ')}, Accept-Encoding`], examples: [READ_VARY.join(', ')] },
  },
  Link: {
    description:
      'RFC 8288 links to the neighbouring pages of the same window, as query-only references resolved against the request URL: ' +
      '`first` always, `prev` after page 1, `next` when an event follows this page (and `page` may still grow). ' +
      'A client pages by following `next` until there is none.',
    required: true,
    schema: {
      type: 'string',
      examples: [
        '<?startDate=2026-12-01&endDate=2026-12-08&page=1&limit=10>; rel="first", <?startDate=2026-12-01&endDate=2026-12-08&page=3&limit=10>; rel="next"',
      ],
    },
  },
} as const;

const headerRef = (name: keyof typeof READ_HEADERS | 'ETag') => ({ $ref: `#/components/headers/${name}` });

/** The headers of a 200 to GET (and HEAD): `etag` names the validator's header component. */
export function readSuccessHeaders(etag: 'ETag' | 'ContentETag', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ETag: headerRef(etag), 'Cache-Control': headerRef('CacheControl'), Vary: headerRef('Vary'), ...extra };
}

/** 304: the validator and caching headers of the 200 it stands for, no content (RFC 9110 §15.4.5). */
export function notModifiedResponse(etag: 'ETag' | 'ContentETag'): Record<string, unknown> {
  return {
    description: 'Not modified: `If-None-Match` names the current entity tag (or is `*`); keep using the stored copy. No content.',
    headers: readSuccessHeaders(etag),
  };
}

export const IF_NONE_MATCH_PARAMETER = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'RFC 9110 `If-None-Match`: `*` or a comma-separated list of entity-tags, compared weakly (`W/"3"` matches `"3"`), evaluated after `If-Match`. ' +
    'When one matches the current `ETag` (or it is `*` and there is a current representation), a `GET` or `HEAD` answers 304 without content and any other method 412, writing nothing. ' +
    'A value outside this grammar is a 400 on every operation.',
  schema: { type: 'string', pattern: IF_MATCH_PATTERN },
  example: '"3"',
};

/** One short paragraph: the docs page renders the operations only once the introduction has scrolled by. */
export const READ_SEMANTICS_DESCRIPTION = `**Reading, paging, browsers.** \`HEAD\` works wherever \`GET\` does and \`OPTIONS\` names the methods (\`Allow\`). Every \`GET\` has a strong \`ETag\`; \`If-None-Match\` with it is a 304 without content, and an \`If-Match\` without it a 412 (events and list pages are \`Cache-Control: ${READ_CACHE_CONTROL}\`). List pages carry RFC 8288 \`Link\` headers (\`first\`, \`prev\`, \`next\`; \`page\` at most ${LIMITS.maxListPage}). Allowed browser origins can read every answer (\`${CORS_EXPOSED_HEADERS.split(',').join('`, `')}\` exposed).`;
