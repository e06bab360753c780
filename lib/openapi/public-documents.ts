// The documents the gateway serves without authentication next to the operations, as
// StaticDocuments for the MOCK answers of lib/openapi/mock-answers.ts: the service index at
// `/v1.1` itself, the OpenAPI document and the Redoc docs page. Deployed, the page loads Redoc
// from Redocly's CDN (lib/cdk/api-documents.ts); locally it loads the same bundle from the local
// API, which serves it as one more document (the one local-only path: the deployed page's script
// is not served by API Gateway).
import { readFile } from 'node:fs/promises';
import {
  DOCS_SPEC_URL,
  docsPageHeaders,
  docsPageHtml,
  LOCAL_REDOC_SCRIPT_PATH,
  LOCAL_REDOC_SCRIPT_URL,
  localRedocBundle,
  redocBundlePath,
} from './docs-page.ts';
import type { StaticDocument } from './mock-answers.ts';
import { buildOpenApiDocument } from './openapi-document.ts';
import { serviceIndexDocument } from './service-index.ts';

/** Paths relative to the base path `/v1.1` ('' is the service index). */
export const PUBLIC_DOCUMENT_PATHS = ['', '/openapi.json', '/docs', LOCAL_REDOC_SCRIPT_PATH] as const;

/** `openapi.json` as the gateway serves it, minified: it must fit in a mapping template. */
export function openApiDocument(): StaticDocument {
  return {
    path: DOCS_SPEC_URL.replace(/^\.\//, ''), // the page's relative URL of the document
    headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' },
    body: JSON.stringify(buildOpenApiDocument()),
  };
}

const localPage = { scriptUrl: LOCAL_REDOC_SCRIPT_URL, specUrl: DOCS_SPEC_URL };

/** The local run's documents by path; each is built once, on first request. */
export function localDocuments(): (path: string) => Promise<StaticDocument | undefined> {
  const cache = new Map<string, Promise<StaticDocument>>();
  const loaders: Record<string, () => Promise<StaticDocument>> = {
    '': async () => serviceIndexDocument(),
    '/openapi.json': async () => openApiDocument(),
    '/docs': async () => ({ path: 'docs', headers: docsPageHeaders(localPage), body: docsPageHtml(localPage) }),
    [LOCAL_REDOC_SCRIPT_PATH]: async () => ({
      path: LOCAL_REDOC_SCRIPT_PATH.slice(1),
      headers: {
        'Content-Type': 'text/javascript; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'public, max-age=3600',
      },
      body: localRedocBundle(await readFile(redocBundlePath())).toString('utf8'),
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
