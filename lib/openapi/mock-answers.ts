// What API Gateway answers by itself, without Lambda and without credentials, as MOCK integration
// definitions: the public documents (service index, openapi.json, docs page) with a strong ETag
// and 304, 405 with `Allow` for a method a resource lacks, OPTIONS with `Allow` (and the CORS
// preflight), and, with CORS on, the 404 of a path the API does not have. The CDK stack deploys
// these definitions (lib/cdk/api-documents.ts) and the local gateway executes the very same
// templates with a Velocity engine (lib/local/mapping-template.ts): one definition, two runners.
import { contentTag } from '../../functions/http/read-responses.ts';
import { gatewayResponse, methodNotAllowedResponse } from '../../functions/http/gateway-responses.ts';
import { ReadPreconditionFailedError } from '../../functions/http/preconditions.ts';
import { PROBLEM_CONTENT_TYPE } from '../../functions/events/problems.ts';
import { CORS_EXPOSED_HEADERS, CORS_REQUEST_HEADERS } from '../../functions/routes.ts';
import { allowHeader, CORS_ALLOWED_METHODS } from '../../functions/route-matching.ts';

/** A MOCK integration with one integration response: its status, static header mappings and response template. */
export interface MockAnswer {
  statusCode: number;
  /** Header name -> mapping expression (a static value is single-quoted, as API Gateway writes it). */
  headers: Record<string, string>;
  /** The `application/json` response template; none: an empty body. */
  template?: string;
}

/** A document served by a MOCK integration. */
export interface StaticDocument {
  /** Path below the resource the documents are mounted on, e.g. `openapi.json`; '' for the resource itself. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The methods of a public document's resource (OPTIONS and the 405 list them with HEAD and OPTIONS). */
export const DOCUMENT_METHODS = ['GET'] as const;

/**
 * How long a browser may reuse a preflight answer (per URL): a day, Firefox's cap. Each browser
 * clamps the value to its own maximum (Chromium 7,200 s, WebKit 600 s; the Fetch standard lets
 * a user agent impose a limit, https://fetch.spec.whatwg.org/#http-access-control-max-age), so
 * the largest cap is the one value that gets every browser its longest cache. The preflight
 * answer changes only with a release that adds methods or request headers.
 */
export const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

const PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Methods': CORS_ALLOWED_METHODS,
  'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS,
  'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
};

/**
 * Velocity lines setting the CORS headers (and `extra` ones) for an allowed Origin; none without
 * origins. A template can choose per request (`$context.responseOverride`), unlike a static header
 * mapping or a gateway response. Every answer varies by Origin when CORS is on (`Vary: Origin`),
 * whether this request sent one or not.
 */
export function corsTemplateLines(corsOrigins: readonly string[], extra: Record<string, string> = {}): string[] {
  if (corsOrigins.length === 0) return [];
  for (const value of [...corsOrigins, ...Object.values(extra)]) {
    if (/['$#\\]/.test(value)) throw new Error(`${value} cannot be written in a mapping template`);
  }
  const set = (name: string, value: string) => `#set($context.responseOverride.header.${name} = ${value})`;
  return [
    `#set($origin = $input.params().header.get('Origin'))`,
    `#if("$!origin" == "")#set($origin = $input.params().header.get('origin'))#end`,
    set('Vary', "'Origin'"),
    `#if(${corsOrigins.map((origin) => `"$!origin" == '${origin}'`).join(' || ')})`,
    set('Access-Control-Allow-Origin', '$origin'),
    set('Access-Control-Expose-Headers', `'${CORS_EXPOSED_HEADERS}'`),
    ...Object.entries(extra).map(([name, value]) => set(name, `'${value}'`)),
    '#end',
  ];
}

/** Static header values are single-quoted in API Gateway's mapping syntax. */
export function staticMappings(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`]));
}

/**
 * GET or HEAD of a document. The body travels base64-encoded through `$util.base64Decode`,
 * because a mapping template is Velocity: the document's own `$ref`, `#` and quotes would
 * otherwise be read as template syntax. Headers are set with `$context.responseOverride`, because
 * static header mappings are single-quoted and the Content-Security-Policy is full of single
 * quotes; a value with double quotes (the Link header's `rel="..."`, the ETag) is a single-quoted
 * Velocity literal instead. The preconditions in the order of RFC 9110 §13.2.2: an If-Match that
 * is neither `*` nor a list with the document's tag itself (strong comparison, §13.1.1: `W/` never
 * matches) is a 412 problem, as a handler's GET answers it (functions/http/preconditions.ts); then
 * If-None-Match containing the tag (weakly or not, alone or in a list) or `*` is a 304 without
 * content. HEAD has no content either. Unlike a handler, the template does not check the
 * headers' grammar: a malformed If-Match matches nothing (412), a malformed If-None-Match nothing (200).
 */
export function documentAnswer(document: StaticDocument, corsOrigins: readonly string[] = []): MockAnswer {
  const etag = contentTag(document.body);
  const override = (name: string, value: string) => {
    if (!/["$#\\]/.test(value)) return `#set($context.responseOverride.header.${name} = "${value}")`;
    if (!value.includes("'")) return `#set($context.responseOverride.header.${name} = '${value}')`;
    throw new Error(`The ${name} header of /${document.path} cannot be written in a mapping template`);
  };
  const { 'Content-Type': contentType, ...headers } = document.headers;
  const problem = Buffer.from(JSON.stringify(new ReadPreconditionFailedError(etag).problem), 'utf8').toString('base64');
  // The outcome is decided first: API Gateway answers 5XX when a template overrides one header twice
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-override-request-response-parameters.html),
  // so Content-Type is set once, for the document or for the 412 problem.
  const template = [
    `#set($ifMatch = $input.params().header.get('If-Match'))`,
    `#if("$!ifMatch" == "")#set($ifMatch = $input.params().header.get('if-match'))#end`,
    '#set($matched = true)',
    `#if("$!ifMatch" != "" && $ifMatch.trim() != '*')#set($matched = false)#foreach($tag in $ifMatch.split(','))#if($tag.trim() == '${etag}')#set($matched = true)#end#end#end`,
    `#set($condition = $input.params().header.get('If-None-Match'))`,
    '#set($notModified = false)',
    `#if($condition && ($condition.contains('${etag}') || $condition.trim() == '*'))#set($notModified = true)#end`,
    ...Object.entries({ ...headers, ETag: etag }).map(([name, value]) => override(name, value)),
    `#if(!$matched)${override('Content-Type', PROBLEM_CONTENT_TYPE)}${contentType === undefined ? '' : `#else${override('Content-Type', contentType)}`}#end`,
    ...corsTemplateLines(corsOrigins),
    '#if($matched && !$notModified)',
    `#if($context.httpMethod != 'HEAD')$util.base64Decode("${Buffer.from(document.body, 'utf8').toString('base64')}")`,
    '#end',
    '#elseif(!$matched)',
    '#set($context.responseOverride.status = 412)',
    `#if($context.httpMethod != 'HEAD')$util.base64Decode("${problem}")#end`,
    '#else',
    '#set($context.responseOverride.status = 304)',
    '#end',
  ].join('\n');
  return { statusCode: 200, headers: {}, template };
}

/**
 * `ANY` on a resource: 405 problem+json with `Allow` for every method the resource lacks (RFC 9110
 * §15.5.6), where API Gateway itself would answer MISSING_AUTHENTICATION_TOKEN.
 */
export function methodNotAllowedAnswer(allowedMethods: readonly string[], corsOrigins: readonly string[] = []): MockAnswer {
  const { statusCode, headers, body } = methodNotAllowedResponse(allowedMethods);
  const template = [...corsTemplateLines(corsOrigins), `#if($context.httpMethod != 'HEAD')${JSON.stringify(body)}#end`].join('\n');
  return { statusCode, headers: staticMappings(headers), template };
}

/** `OPTIONS` on a resource: 204 with `Allow` (RFC 9110 §9.3.7); to an allowed Origin also the CORS preflight answer. */
export function optionsAnswer(allowedMethods: readonly string[], corsOrigins: readonly string[] = []): MockAnswer {
  return {
    statusCode: 204,
    headers: staticMappings({ Allow: allowHeader(allowedMethods) }),
    ...(corsOrigins.length > 0 ? { template: corsTemplateLines(corsOrigins, PREFLIGHT_HEADERS).join('\n') } : {}),
  };
}

/**
 * With CORS on, `/v1.1/{proxy+}` answers every path the API does not have: a preflight from an
 * allowed origin succeeds (OPTIONS), so the page can read the 404 problem that ANY then answers
 * (the MISSING_AUTHENTICATION_TOKEN body, with the CORS headers a gateway response cannot choose
 * per request). Explicit resources win over the proxy resource. None without CORS.
 */
export function unknownPathAnswers(corsOrigins: readonly string[]): { OPTIONS: MockAnswer; ANY: MockAnswer } | undefined {
  if (corsOrigins.length === 0) return undefined;
  const { statusCode, headers, body } = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
  return {
    OPTIONS: { statusCode: 204, headers: {}, template: corsTemplateLines(corsOrigins, PREFLIGHT_HEADERS).join('\n') },
    ANY: {
      statusCode,
      headers: staticMappings(headers),
      template: [...corsTemplateLines(corsOrigins), `#if($context.httpMethod != 'HEAD')${JSON.stringify(body)}#end`].join('\n'),
    },
  };
}
