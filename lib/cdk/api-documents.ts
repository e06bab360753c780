// What the deployed API answers without Lambda and without authentication, as API Gateway MOCK
// integrations generated at synthesis from the same code the local API answers from:
// - `GET`/`HEAD /v1.1` (the service index), `/v1.1/openapi.json` and `/v1.1/docs`
//   (lib/openapi/service-index.ts, public-documents.ts; Redoc's script from Redocly's CDN, pinned
//   by SRI), each with a strong ETag of its bytes and 304 for a matching If-None-Match,
// - 405 with `Allow` for a method a resource does not have (an ANY method: API Gateway prefers
//   the resource's explicit methods over ANY), and OPTIONS with `Allow` on every resource.
// With CORS origins configured, each of these answers an allowed Origin with the CORS headers,
// chosen per request in the mapping template (lib/cdk/mock-cors.ts).
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { Validations } from 'aws-cdk-lib';
import { methodNotAllowedResponse } from '../../functions/http/gateway-responses.ts';
import { contentTag } from '../../functions/http/read-responses.ts';
import { gatewayResponse } from '../../functions/http/gateway-responses.ts';
import { allowHeader, CORS_ALLOWED_METHODS, CORS_REQUEST_HEADERS } from '../../functions/routes.ts';
import { corsTemplateLines } from './mock-cors.ts';
import { DOCS_SPEC_URL, docsPageHeaders, docsPageHtml, redocBundleIntegrity, redocCdnUrl } from '../openapi/docs-page.ts';
import { buildOpenApiDocument } from '../openapi/openapi-document.ts';
import { serviceIndex, serviceIndexHeaders } from '../openapi/service-index.ts';

/** The methods of a public document's resource (OPTIONS and the 405 list them with HEAD and OPTIONS). */
export const DOCUMENT_METHODS = ['GET'] as const;

export interface StaticDocument {
  /** Path below the resource the documents are mounted on, e.g. `openapi.json`. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** API Gateway's limit on one mapping template (not adjustable). */
export const MAPPING_TEMPLATE_LIMIT_BYTES = 300 * 1024;

export function apiDocuments(): StaticDocument[] {
  const page = { scriptUrl: redocCdnUrl(), scriptIntegrity: redocBundleIntegrity(), specUrl: DOCS_SPEC_URL };
  return [
    {
      path: DOCS_SPEC_URL.replace(/^\.\//, ''), // the page's relative URL of the document
      headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' },
      // Minified: the document must fit in a mapping template.
      body: JSON.stringify(buildOpenApiDocument()),
    },
    { path: 'docs', headers: docsPageHeaders(page), body: docsPageHtml(page) },
  ];
}

/** `GET /v1.1`: the service index, with its RFC 8631 Link headers. */
export function serviceIndexDocument(): StaticDocument {
  return { path: '', headers: serviceIndexHeaders(), body: JSON.stringify(serviceIndex()) };
}

/**
 * The response template of a document. The body travels base64-encoded through
 * `$util.base64Decode`, because a mapping template is Velocity: the document's own `$ref`, `#`
 * and quotes would otherwise be read as template syntax. Headers are set with
 * `$context.responseOverride`, because static header mappings are single-quoted and the
 * Content-Security-Policy is full of single quotes. A value with double quotes (the Link
 * header's `rel="..."`, the ETag) is a single-quoted Velocity literal instead, which Velocity
 * does not interpret. If-None-Match naming the document's tag (weakly or not, alone or in a
 * list) or `*` is a 304 without content; HEAD has no content either.
 */
export function documentTemplate(document: StaticDocument, corsOrigins: readonly string[] = []): string {
  const etag = contentTag(document.body);
  const overrides = Object.entries({ ...document.headers, ETag: etag }).map(([name, value]) => {
    if (!/["$#\\]/.test(value)) return `#set($context.responseOverride.header.${name} = "${value}")`;
    if (!value.includes("'")) return `#set($context.responseOverride.header.${name} = '${value}')`;
    throw new Error(`The ${name} header of /${document.path} cannot be written in a mapping template`);
  });
  return [
    ...overrides,
    ...corsTemplateLines(corsOrigins),
    `#set($condition = $input.params().header.get('If-None-Match'))`,
    `#if($condition && ($condition.contains('${etag}') || $condition.trim() == '*'))`,
    '#set($context.responseOverride.status = 304)',
    `#elseif($context.httpMethod != 'HEAD')`,
    `$util.base64Decode("${Buffer.from(document.body, 'utf8').toString('base64')}")`,
    '#end',
  ].join('\n');
}

export function addStaticDocuments(parent: apigw.IResource, documents: readonly StaticDocument[], corsOrigins: readonly string[] = []): void {
  for (const document of documents) addDocumentMethods(parent.addResource(document.path), document, corsOrigins);
}

/** `GET /v1.1` on the version resource itself. */
export function addServiceIndex(versionRoot: apigw.IResource, corsOrigins: readonly string[] = []): void {
  addDocumentMethods(versionRoot, serviceIndexDocument(), corsOrigins);
}

/** GET and HEAD of a document, OPTIONS, and 405 for every other method. */
function addDocumentMethods(resource: apigw.IResource, document: StaticDocument, corsOrigins: readonly string[]): void {
  for (const httpMethod of ['GET', 'HEAD']) addDocumentMethod(resource, httpMethod, document, corsOrigins);
  addOptionsAllow(resource, DOCUMENT_METHODS, corsOrigins);
  addMethodNotAllowed(resource, DOCUMENT_METHODS, corsOrigins);
}

function addDocumentMethod(resource: apigw.IResource, httpMethod: string, document: StaticDocument, corsOrigins: readonly string[]): apigw.Method {
  const template = documentTemplate(document, corsOrigins);
  if (Buffer.byteLength(template) > MAPPING_TEMPLATE_LIMIT_BYTES) {
    throw new Error(`/${document.path} is too large for an API Gateway mapping template (${Buffer.byteLength(template)} bytes)`);
  }
  const method = resource.addMethod(
    httpMethod,
    new apigw.MockIntegration({
      requestTemplates: { 'application/json': '{"statusCode": 200}' },
      passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
      // One template: API Gateway falls back to it whatever the Accept header asks for, and
      // the Content-Type it would imply is overridden above.
      integrationResponses: [{ statusCode: '200', responseTemplates: { 'application/json': template } }],
    }),
    { authorizationType: apigw.AuthorizationType.NONE, methodResponses: [{ statusCode: '200' }] },
  );
  Validations.of(method).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason: 'The service index, the API description and its docs page are public, like the specification they render; they hold no data.',
  });
  return method;
}

/**
 * `ANY` on a resource: 405 problem+json with `Allow` for every method the resource lacks. No
 * request template, so any body and content type reach the default integration response
 * (a template would make API Gateway answer 415 for unmapped content types instead).
 */
export function addMethodNotAllowed(resource: apigw.IResource, allowedMethods: readonly string[], corsOrigins: readonly string[] = []): apigw.Method {
  const { statusCode, headers, body } = methodNotAllowedResponse(allowedMethods);
  const template = [...corsTemplateLines(corsOrigins), `#if($context.httpMethod != 'HEAD')${JSON.stringify(body)}#end`].join('\n');
  const method = resource.addMethod(
    'ANY',
    new apigw.MockIntegration({
      passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
      integrationResponses: [{ statusCode: String(statusCode), responseParameters: staticHeaders(headers), responseTemplates: { 'application/json': template } }],
    }),
    { authorizationType: apigw.AuthorizationType.NONE, methodResponses: [{ statusCode: String(statusCode), responseParameters: declaredHeaders(headers) }] },
  );
  Validations.of(method).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason: 'Answers only 405 with the methods the resource has (public in the OpenAPI document); it runs no code and reads no data, so it needs no credentials.',
  });
  return method;
}

/**
 * `OPTIONS` on a resource: 204 with `Allow` (RFC 9110 9.3.7), as the local API answers it; to an
 * allowed Origin also the CORS preflight answer (methods, request headers, max age).
 */
export function addOptionsAllow(resource: apigw.IResource, allowedMethods: readonly string[], corsOrigins: readonly string[] = []): apigw.Method {
  const allow = allowHeader(allowedMethods);
  const headers = { Allow: allow };
  const preflight = {
    'Access-Control-Allow-Methods': CORS_ALLOWED_METHODS,
    'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS,
    'Access-Control-Max-Age': '600',
  };
  const method = resource.addMethod(
    'OPTIONS',
    new apigw.MockIntegration({
      passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
      integrationResponses: [
        {
          statusCode: '204',
          responseParameters: staticHeaders(headers),
          ...(corsOrigins.length > 0 ? { responseTemplates: { 'application/json': corsTemplateLines(corsOrigins, preflight).join('\n') } } : {}),
        },
      ],
    }),
    { authorizationType: apigw.AuthorizationType.NONE, methodResponses: [{ statusCode: '204', responseParameters: declaredHeaders(headers) }] },
  );
  Validations.of(method).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason: 'OPTIONS names the methods of the resource (public in the OpenAPI document), as a CORS preflight would; it runs no code and reads no data.',
  });
  return method;
}

/** Static header values are single-quoted in API Gateway's mapping syntax. */
function staticHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, `'${value}'`]));
}

function declaredHeaders(headers: Record<string, string>): Record<string, boolean> {
  return Object.fromEntries(Object.keys(headers).map((name) => [`method.response.header.${name}`, true]));
}

/**
 * With CORS on, `/v1.1/{proxy+}` answers every path the API does not have: a preflight from an
 * allowed origin succeeds (OPTIONS), so the page can read the 404 problem that ANY then answers
 * (the same body as the MISSING_AUTHENTICATION_TOKEN gateway response, with the CORS headers a
 * gateway response cannot choose per request). Explicit resources win over the proxy resource.
 */
export function addUnknownPathAnswers(versionRoot: apigw.IResource, corsOrigins: readonly string[]): void {
  if (corsOrigins.length === 0) return;
  const resource = versionRoot.addResource('{proxy+}');
  const { statusCode, headers, body } = gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
  const template = [...corsTemplateLines(corsOrigins), `#if($context.httpMethod != 'HEAD')${JSON.stringify(body)}#end`].join('\n');
  const preflight = { 'Access-Control-Allow-Methods': CORS_ALLOWED_METHODS, 'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS, 'Access-Control-Max-Age': '600' };
  const methods = [
    resource.addMethod(
      'OPTIONS',
      new apigw.MockIntegration({
        passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
        integrationResponses: [{ statusCode: '204', responseTemplates: { 'application/json': corsTemplateLines(corsOrigins, preflight).join('\n') } }],
      }),
      { authorizationType: apigw.AuthorizationType.NONE, methodResponses: [{ statusCode: '204' }] },
    ),
    resource.addMethod(
      'ANY',
      new apigw.MockIntegration({
        passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
        integrationResponses: [{ statusCode: String(statusCode), responseParameters: staticHeaders(headers), responseTemplates: { 'application/json': template } }],
      }),
      { authorizationType: apigw.AuthorizationType.NONE, methodResponses: [{ statusCode: String(statusCode), responseParameters: declaredHeaders(headers) }] },
    ),
  ];
  for (const method of methods) {
    Validations.of(method).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason: 'Answers only the 404 problem (and its CORS preflight) for paths the API does not have; it runs no code and reads no data.',
    });
  }
}
