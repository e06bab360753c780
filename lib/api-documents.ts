// What the deployed API answers without Lambda and without authentication, as API Gateway MOCK
// integrations generated at synthesis from the same code the local API answers from:
// - `GET /v1.1` (the service index), `GET /v1.1/openapi.json` and `GET /v1.1/docs`
//   (lib/openapi/service-index.ts, public-documents.ts; Redoc's script from Redocly's CDN, pinned by SRI),
// - 405 with `Allow` for a method a resource does not have (an ANY method: API Gateway prefers
//   the resource's explicit methods over ANY), and OPTIONS with `Allow` when CORS is off.
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { Validations } from 'aws-cdk-lib';
import { methodNotAllowedResponse } from '../functions/shared/gateway-responses.ts';
import { DOCS_SPEC_URL, docsPageHeaders, docsPageHtml, redocBundleIntegrity, redocCdnUrl } from './openapi/docs-page.ts';
import { buildOpenApiDocument } from './openapi/openapi-document.ts';
import { serviceIndex, serviceIndexHeaders } from './openapi/service-index.ts';

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
 * header's `rel="..."`) is a single-quoted Velocity literal instead, which Velocity does not interpret.
 */
export function documentTemplate(document: StaticDocument): string {
  const overrides = Object.entries(document.headers).map(([name, value]) => {
    if (!/["$#\\]/.test(value)) return `#set($context.responseOverride.header.${name} = "${value}")`;
    if (!value.includes("'")) return `#set($context.responseOverride.header.${name} = '${value}')`;
    throw new Error(`The ${name} header of /${document.path} cannot be written in a mapping template`);
  });
  return [...overrides, `$util.base64Decode("${Buffer.from(document.body, 'utf8').toString('base64')}")`].join('\n');
}

export function addStaticDocuments(parent: apigw.IResource, documents: readonly StaticDocument[]): apigw.Method[] {
  return documents.map((document) => addDocumentMethod(parent.addResource(document.path), document));
}

/** `GET /v1.1` on the version resource itself. */
export function addServiceIndex(versionRoot: apigw.IResource): apigw.Method {
  return addDocumentMethod(versionRoot, serviceIndexDocument());
}

function addDocumentMethod(resource: apigw.IResource, document: StaticDocument): apigw.Method {
  const template = documentTemplate(document);
  if (Buffer.byteLength(template) > MAPPING_TEMPLATE_LIMIT_BYTES) {
    throw new Error(`/${document.path} is too large for an API Gateway mapping template (${Buffer.byteLength(template)} bytes)`);
  }
  const method = resource.addMethod(
    'GET',
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
  const response = methodNotAllowedResponse(allowedMethods);
  const { statusCode, body } = response;
  // As the gateway responses: one allowed origin can be named statically, so a browser can read the 405.
  const headers: Record<string, string> = corsOrigins.length === 1 ? { ...response.headers, 'Access-Control-Allow-Origin': corsOrigins[0] as string, Vary: 'Origin' } : response.headers;
  const method = resource.addMethod(
    'ANY',
    new apigw.MockIntegration({
      passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
      integrationResponses: [
        { statusCode: String(statusCode), responseParameters: staticHeaders(headers), responseTemplates: { 'application/json': JSON.stringify(body) } },
      ],
    }),
    { authorizationType: apigw.AuthorizationType.NONE, methodResponses: [{ statusCode: String(statusCode), responseParameters: declaredHeaders(headers) }] },
  );
  Validations.of(method).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason: 'Answers only 405 with the methods the resource has (public in the OpenAPI document); it runs no code and reads no data, so it needs no credentials.',
  });
  return method;
}

/** `OPTIONS` when CORS is off: 204 with `Allow` (RFC 9110 9.3.7), as the local API answers it. */
export function addOptionsAllow(resource: apigw.IResource, allowedMethods: readonly string[]): apigw.Method {
  const headers = { Allow: methodNotAllowedResponse(allowedMethods).headers.Allow };
  const method = resource.addMethod(
    'OPTIONS',
    new apigw.MockIntegration({
      passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
      integrationResponses: [{ statusCode: '204', responseParameters: staticHeaders(headers) }],
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
