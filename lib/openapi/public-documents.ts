// What the local API serves without authentication next to the operations: the OpenAPI document
// (generated from the code on first request), the Redoc docs page and Redoc's bundle. (The
// service index at `/v1.1` itself is lib/openapi/service-index.ts.) The
// deployed API serves the same document and page from API Gateway (see the CDK stack).
import { readFile } from 'node:fs/promises';
import { DOCS_SPEC_URL, docsPageHeaders, docsPageHtml, LOCAL_REDOC_SCRIPT_PATH, LOCAL_REDOC_SCRIPT_URL, localRedocBundle, redocBundlePath } from './docs-page.ts';

export interface PublicDocument {
  statusCode: 200;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** Paths relative to the base path `/v1.1`. */
export const PUBLIC_DOCUMENT_PATHS = ['/openapi.json', '/docs', LOCAL_REDOC_SCRIPT_PATH] as const;

const localPage = { scriptUrl: LOCAL_REDOC_SCRIPT_URL, specUrl: DOCS_SPEC_URL };

/** Returns a lookup `path -> document` that loads each document once, on first request. */
export function publicDocuments(): (path: string) => Promise<PublicDocument | undefined> {
  const cache = new Map<string, Promise<PublicDocument>>();
  const loaders: Record<string, () => Promise<PublicDocument>> = {
    '/openapi.json': async () => {
      // Imported on demand: building the document loads the schemas and the problem catalogue.
      const { buildOpenApiDocument, serializeOpenApiDocument } = await import('./openapi-document.ts');
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' },
        body: serializeOpenApiDocument(buildOpenApiDocument()),
      };
    },
    '/docs': async () => ({ statusCode: 200, headers: docsPageHeaders(localPage), body: docsPageHtml(localPage) }),
    [LOCAL_REDOC_SCRIPT_PATH]: async () => ({
      statusCode: 200,
      headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'public, max-age=3600' },
      body: localRedocBundle(await readFile(redocBundlePath())),
    }),
  };
  return (path) => {
    const load = loaders[path];
    if (!load) return Promise.resolve(undefined);
    let document = cache.get(path);
    if (!document) {
      document = load();
      document.catch(() => cache.delete(path)); // a failed load is retried on the next request
      cache.set(path, document);
    }
    return document;
  };
}
