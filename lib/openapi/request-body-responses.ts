// The answers about a request's size and body that the special-event and webhook operations share:
// API Gateway's own 413s on every operation, the handler's 413 and 415 where a handler reads a body
// (functions/http/http.ts jsonRequestBody()).
import { LIMITS } from '../../functions/events/limits.ts';
import { problemExamples as problems } from './examples.ts';
import {
  GATEWAY_ANSWERS_EXTENSION,
  gatewayPayloadLimitAnswers,
  HEADER_REFS,
  PAYLOAD_LIMIT_DESCRIPTION,
  problemResponse,
} from './problem-responses.ts';

/** API Gateway's own 413s (gatewayPayloadLimitAnswers()), which cannot be customised: described, with no problem content. */
export const gatewayTooLarge = {
  description: PAYLOAD_LIMIT_DESCRIPTION,
  [GATEWAY_ANSWERS_EXTENSION]: gatewayPayloadLimitAnswers(),
};
/** The handler's 413 problem for a body over the API's limit, beside API Gateway's own 413s. */
export const bodyTooLarge = (() => {
  const handler = problemResponse(413, `The body exceeds ${LIMITS.maxBodyBytes} bytes (64 KiB): a problem. ${PAYLOAD_LIMIT_DESCRIPTION}`, {
    bodyTooLarge: problems.bodyTooLarge,
  });
  return { ...handler, [GATEWAY_ANSWERS_EXTENSION]: gatewayPayloadLimitAnswers() };
})();
export const unsupportedMediaType = problemResponse(
  415,
  'The body is not sent as `application/json` (or `application/merge-patch+json` for PATCH) in UTF-8, or it has a `Content-Encoding` other than `identity` (then `Accept-Encoding: identity` says so). ' +
    'A `Content-Type` given twice, or with a parameter given twice, is a 400: the media type is then undetermined, not unsupported',
  { unsupportedMediaType: problems.unsupportedMediaType, contentCoded: problems.contentCoded },
  { 'Accept-Encoding': HEADER_REFS.AcceptEncoding },
);
