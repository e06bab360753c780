// What the deployed API answers without Lambda and without authentication: API Gateway MOCK
// integrations built from the definitions in lib/openapi/mock-answers.ts, which the local gateway
// executes too: the service index and documents (with a strong ETag and 304), 405 with `Allow`
// for a method a resource does not have (an ANY method: API Gateway prefers the resource's
// explicit methods over ANY), OPTIONS with `Allow` on every resource, and with CORS on the 404 of
// an unknown path. With CORS origins configured, each answers an allowed Origin with the CORS
// headers, chosen per request in the mapping template.
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { Validations } from 'aws-cdk-lib';
import { DOCS_SPEC_URL, docsPageHeaders, docsPageHtml, redocBundleIntegrity, redocCdnUrl } from '../openapi/docs-page.ts';
import { openApiDocument } from '../openapi/public-documents.ts';
import {
  documentAnswer,
  DOCUMENT_METHODS,
  methodNotAllowedAnswer,
  optionsAnswer,
  unknownPathAnswers,
  type MockAnswer,
  type StaticDocument,
} from '../openapi/mock-answers.ts';
import { serviceIndexDocument } from '../openapi/service-index.ts';

export { DOCUMENT_METHODS, serviceIndexDocument, type StaticDocument };

/** API Gateway's limit on one mapping template (not adjustable). */
export const MAPPING_TEMPLATE_LIMIT_BYTES = 300 * 1024;

/** The deployed documents: the OpenAPI document and the docs page with Redoc from Redocly's CDN, pinned by SRI. */
export function apiDocuments(): StaticDocument[] {
  const page = { scriptUrl: redocCdnUrl(), scriptIntegrity: redocBundleIntegrity(), specUrl: DOCS_SPEC_URL };
  return [openApiDocument(), { path: 'docs', headers: docsPageHeaders(page), body: docsPageHtml(page) }];
}

export function addStaticDocuments(
  parent: apigw.IResource,
  documents: readonly StaticDocument[],
  corsOrigins: readonly string[] = [],
): void {
  for (const document of documents) addDocumentMethods(parent.addResource(document.path), document, corsOrigins);
}

/** `GET /v1.1` on the version resource itself. */
export function addServiceIndex(versionRoot: apigw.IResource, corsOrigins: readonly string[] = []): void {
  addDocumentMethods(versionRoot, serviceIndexDocument(), corsOrigins);
}

/** GET and HEAD of a document, OPTIONS, and 405 for every other method. */
function addDocumentMethods(resource: apigw.IResource, document: StaticDocument, corsOrigins: readonly string[]): void {
  const answer = documentAnswer(document, corsOrigins);
  const size = Buffer.byteLength(answer.template ?? '');
  if (size > MAPPING_TEMPLATE_LIMIT_BYTES)
    throw new Error(`/${document.path} is too large for an API Gateway mapping template (${size} bytes)`);
  for (const httpMethod of ['GET', 'HEAD']) {
    addMockMethod(
      resource,
      httpMethod,
      answer,
      'The service index, the API description and its docs page are public, like the specification they render; they hold no data.',
      {
        'application/json': '{"statusCode": 200}',
      },
    );
  }
  addOptionsAllow(resource, DOCUMENT_METHODS, corsOrigins);
  addMethodNotAllowed(resource, DOCUMENT_METHODS, corsOrigins);
}

/**
 * `ANY` on a resource: 405. No request template, so any body and content type reach the default
 * integration response (a template would make API Gateway answer 415 for unmapped content types).
 */
export function addMethodNotAllowed(
  resource: apigw.IResource,
  allowedMethods: readonly string[],
  corsOrigins: readonly string[] = [],
): apigw.Method {
  return addMockMethod(
    resource,
    'ANY',
    methodNotAllowedAnswer(allowedMethods, corsOrigins),
    'Answers only 405 with the methods the resource has (public in the OpenAPI document); it runs no code and reads no data, so it needs no credentials.',
  );
}

/** `OPTIONS` on a resource: 204 with `Allow`, as the local API answers it; to an allowed Origin also the preflight. */
export function addOptionsAllow(
  resource: apigw.IResource,
  allowedMethods: readonly string[],
  corsOrigins: readonly string[] = [],
): apigw.Method {
  return addMockMethod(
    resource,
    'OPTIONS',
    optionsAnswer(allowedMethods, corsOrigins),
    'OPTIONS names the methods of the resource (public in the OpenAPI document), as a CORS preflight would; it runs no code and reads no data.',
  );
}

/** With CORS on, `/v1.1/{proxy+}`: the 404 problem and its preflight for paths the API does not have. */
export function addUnknownPathAnswers(versionRoot: apigw.IResource, corsOrigins: readonly string[]): void {
  const answers = unknownPathAnswers(corsOrigins);
  if (!answers) return;
  const resource = versionRoot.addResource('{proxy+}');
  const reason =
    'Answers only the 404 problem (and its CORS preflight) for paths the API does not have; it runs no code and reads no data.';
  for (const [httpMethod, answer] of Object.entries(answers)) addMockMethod(resource, httpMethod, answer, reason);
}

/** One MOCK method with one integration response, unauthenticated (cdk-nag's APIG4 acknowledged with `reason`). */
function addMockMethod(
  resource: apigw.IResource,
  httpMethod: string,
  answer: MockAnswer,
  reason: string,
  requestTemplates?: Record<string, string>,
): apigw.Method {
  const status = String(answer.statusCode);
  const names = Object.keys(answer.headers);
  const method = resource.addMethod(
    httpMethod,
    new apigw.MockIntegration({
      ...(requestTemplates ? { requestTemplates } : {}),
      passthroughBehavior: apigw.PassthroughBehavior.WHEN_NO_TEMPLATES,
      // One template: API Gateway falls back to it whatever the Accept header asks for.
      integrationResponses: [
        {
          statusCode: status,
          ...(names.length === 0
            ? {}
            : {
                responseParameters: Object.fromEntries(
                  names.map((name) => [`method.response.header.${name}`, answer.headers[name] as string]),
                ),
              }),
          ...(answer.template === undefined ? {} : { responseTemplates: { 'application/json': answer.template } }),
        },
      ],
    }),
    {
      authorizationType: apigw.AuthorizationType.NONE,
      methodResponses: [
        {
          statusCode: status,
          ...(names.length === 0
            ? {}
            : { responseParameters: Object.fromEntries(names.map((name) => [`method.response.header.${name}`, true])) }),
        },
      ],
    },
  );
  Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
  return method;
}
