// `GET /v1.1` in the document: the service index operation and its body's schema. The index
// itself (its links and headers) is in service-index.ts, which the local API and the CDK app serve.
import * as v from 'valibot';
import { API_VERSION, BASE_PATH } from '../../functions/routes.ts';
import { json, schemaRef } from './document-schemas.ts';
import { problemExamples } from './examples.ts';
import { problemResponse } from './problem-responses.ts';
import { serviceIndex, serviceIndexHeaders } from './service-index.ts';

/** The tag of the service index operation. */
export const INDEX_TAG = 'Service';

export const ServiceIndex = v.pipe(
  v.strictObject({
    name: v.string(),
    version: v.literal(API_VERSION),
    links: v.strictObject({
      'service-desc': v.pipe(v.string(), v.description('This document (relative to the request URL)')),
      'service-doc': v.pipe(v.string(), v.description('The rendered documentation')),
      'special-events': v.pipe(v.string(), v.description('The special events collection')),
    }),
  }),
  v.description('The entry point of the API: its name, interface version and links (also sent as RFC 8631 `Link` headers)'),
);

/** `GET /v1.1`: the service index (service-index.ts), served without credentials. */
export function serviceIndexOperation(): Record<string, unknown> {
  const body = v.parse(ServiceIndex, serviceIndex());
  return {
    operationId: 'getServiceIndex',
    summary: 'Service index',
    description:
      `The entry point: the base URL itself (\`${BASE_PATH}\`, without a trailing slash, since the links are relative to it). ` +
      'Links to this document and to the rendered documentation, in the body and as RFC 8631 `Link` headers. No credentials needed.',
    tags: [INDEX_TAG],
    security: [],
    responses: {
      200: {
        description: 'The service index',
        headers: {
          Link: {
            description: 'RFC 8631 links: `service-desc` (this OpenAPI document) and `service-doc` (its rendering)',
            required: true,
            schema: { type: 'string', examples: [serviceIndexHeaders().Link] },
          },
          ETag: { $ref: '#/components/headers/ContentETag' },
        },
        content: json(schemaRef('ServiceIndex'), { index: { summary: 'The index', value: body } }),
      },
      304: {
        description: 'Not modified: `If-None-Match` names the current entity tag (or is `*`). No content.',
        headers: { ETag: { $ref: '#/components/headers/ContentETag' } },
      },
      412: problemResponse(
        412,
        '`If-Match` is neither `*` nor a list holding the current strong entity tag (weak tags never match); evaluated before `If-None-Match`. ' +
          'The gateway does not parse the field: a malformed one matches nothing. The same holds for `openapi.json` and `docs`.',
        { readIfMatchFailed: problemExamples.readIfMatchFailed },
        { ETag: { $ref: '#/components/headers/ContentETag' } },
      ),
      429: { $ref: '#/components/responses/TooManyRequests' },
    },
  };
}
