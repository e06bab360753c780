// `GET /v1.1/openapi.json` and `GET /v1.1/docs` on the deployed API, without Lambda and without
// authentication: API Gateway MOCK integrations whose response templates hold the documents, as
// generated at synthesis from the same code the local API serves them from
// (lib/openapi/public-documents.ts). Redoc's script comes from Redocly's CDN, pinned by SRI.
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { Validations } from 'aws-cdk-lib';
import { DOCS_SPEC_URL, docsPageHeaders, docsPageHtml, redocBundleIntegrity, redocCdnUrl } from './openapi/docs-page.ts';
import { buildOpenApiDocument } from './openapi/openapi-document.ts';

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

/**
 * The response template of a document. The body travels base64-encoded through
 * `$util.base64Decode`, because a mapping template is Velocity: the document's own `$ref`, `#`
 * and quotes would otherwise be read as template syntax. Headers are set with
 * `$context.responseOverride`, because static header mappings are single-quoted and the
 * Content-Security-Policy is full of single quotes.
 */
export function documentTemplate(document: StaticDocument): string {
  const overrides = Object.entries(document.headers).map(([name, value]) => {
    if (/["$#\\]/.test(value)) throw new Error(`The ${name} header of ${document.path} cannot be written in a mapping template`);
    return `#set($context.responseOverride.header.${name} = "${value}")`;
  });
  return [...overrides, `$util.base64Decode("${Buffer.from(document.body, 'utf8').toString('base64')}")`].join('\n');
}

export function addStaticDocuments(parent: apigw.IResource, documents: readonly StaticDocument[]): apigw.Method[] {
  return documents.map((document) => {
    const template = documentTemplate(document);
    if (Buffer.byteLength(template) > MAPPING_TEMPLATE_LIMIT_BYTES) {
      throw new Error(`${document.path} is too large for an API Gateway mapping template (${Buffer.byteLength(template)} bytes)`);
    }
    const method = parent.addResource(document.path).addMethod(
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
      reason: 'The API description and its docs page are public, like the specification they render; they hold no data.',
    });
    return method;
  });
}
