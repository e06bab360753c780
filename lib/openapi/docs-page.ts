// The human-readable docs page, `GET /v1.1/docs`: Redoc rendering the OpenAPI document. The page
// is static, so the local API and the deployed one (an API Gateway MOCK integration) serve the
// same HTML; only the URL of Redoc's script differs. Relative URLs resolve against `/v1.1/docs`,
// so they work behind a custom domain and behind the `/{stage}` prefix of an execute-api URL.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Where the page fetches the document from, relative to the page. */
export const DOCS_SPEC_URL = './openapi.json';
/** Where the local API serves Redoc's standalone bundle, below the base path. */
export const LOCAL_REDOC_SCRIPT_PATH = '/docs/redoc.standalone.js';
/** The same, relative to the page (`./`: a module specifier must not be bare). */
export const LOCAL_REDOC_SCRIPT_URL = `.${LOCAL_REDOC_SCRIPT_PATH}`;

/**
 * Redoc's standalone bundle (an ES module) as shipped inside the pinned @redocly/cli, which uses it
 * for `redocly build-docs`. The `redoc` npm package itself is not installable here (its 3.x
 * dependency @redocly/redoc-opentelemetry is missing from the registry; 2.x pulls core-js with an
 * install script), and the docs page test fails loudly if a CLI upgrade moves the file.
 */
export function redocBundlePath(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'lib', 'chunks', 'redoc.standalone.js');
}

/** The Redoc version in the bundle's licence header. */
export function redocVersion(bundle: string = readFileSync(redocBundlePath(), 'utf8').slice(0, 400)): string {
  const version = /Version:\s*(\d+\.\d+\.\d+)/.exec(bundle)?.[1];
  if (!version) throw new Error('No version in the Redoc bundle header');
  return version;
}

/** The same bundle on Redocly's CDN (what `redocly build-docs` links to), for the deployed page. */
export function redocCdnUrl(version: string = redocVersion()): string {
  return `https://cdn.redocly.com/redoc/v${version}/bundles/redoc.standalone.js`;
}

/** Where Redoc's bundle loads its footer logo from (`https://cdn.redoc.ly/redoc/logo-mini*.svg`). */
export const REDOC_LOGO_ORIGIN = 'https://cdn.redoc.ly';

/** A small "Redocly" wordmark for the footer of the local page, which contacts no other host. */
const LOCAL_REDOC_LOGO =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='60' height='16'%3E%3Ctext x='0' y='12' " +
  "font-family='sans-serif' font-size='12' fill='%23888'%3ERedocly%3C/text%3E%3C/svg%3E";

/** The bundle as the local API serves it: its logo URLs point at the local wordmark (so the CSP blocks nothing). */
export function localRedocBundle(bundle: Buffer): Buffer {
  const text = bundle.toString('utf8').replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g, LOCAL_REDOC_LOGO);
  return Buffer.from(text, 'utf8');
}

/** Subresource Integrity of the local bundle: pins the CDN copy to the reviewed bytes. */
export function redocBundleIntegrity(bundle: Buffer = readFileSync(redocBundlePath())): string {
  return `sha384-${createHash('sha384').update(bundle).digest('base64')}`;
}

export interface DocsPageOptions {
  /** URL of Redoc's standalone ES module bundle: LOCAL_REDOC_SCRIPT_URL locally, redocCdnUrl() when deployed. */
  scriptUrl: string;
  /** URL of the OpenAPI document: DOCS_SPEC_URL. */
  specUrl: string;
  /** SRI hash of the script (redocBundleIntegrity()), for a script served from another origin. */
  scriptIntegrity?: string;
  title?: string;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** A JSON literal that cannot end the inline script early. */
const scriptLiteral = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028|\u2029/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

/**
 * The inline module, byte for byte as it appears between the script tags (its hash is in the CSP).
 * It loads the document itself to put the server the page came from first in Redoc's Servers box
 * (the base URL is the page's directory: right on any port, stage prefix or domain), in place of
 * the document's loopback entry, which names the default port only.
 */
function inlineScript({ scriptUrl, specUrl }: DocsPageOptions): string {
  return (
    `\nimport { init } from ${scriptLiteral(scriptUrl)};\n` +
    `const specUrl = ${scriptLiteral(specUrl)};\n` +
    `const spec = await fetch(specUrl).then((response) => response.json()).catch(() => undefined);\n` +
    `if (spec) {\n` +
    `  const here = new URL('.', location.href).href.replace(/\\/$/, '');\n` +
    `  const others = (spec.servers ?? []).filter((server) => server.url !== here && !/^https?:\\/\\/(127\\.0\\.0\\.1|localhost)[:/]/.test(server.url));\n` +
    `  spec.servers = [{ url: here, description: 'This server' }, ...others];\n` +
    `}\n` +
    `init(spec ?? specUrl, { disableTelemetry: true, hideLoading: false }, document.getElementById('redoc'));\n`
  );
}

/** The page's HTML. Pure: the same options give the same bytes (the CDK stack inlines it in a MOCK integration). */
export function docsPageHtml(options: DocsPageOptions): string {
  const title = escapeHtml(options.title ?? 'Museum Special Events API');
  const preload = options.scriptIntegrity
    ? `<link rel="modulepreload" href="${escapeHtml(options.scriptUrl)}" integrity="${escapeHtml(options.scriptIntegrity)}" crossorigin="anonymous">\n`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
${preload}<style>body { margin: 0; }</style>
</head>
<body>
<noscript><p>This page renders the API description with JavaScript. Without it, read the description itself: <a href="${escapeHtml(options.specUrl)}">openapi.json</a> (OpenAPI 3.1, JSON).</p></noscript>
<div id="redoc"></div>
<script type="module">${inlineScript(options)}</script>
</body>
</html>
`;
}

/**
 * Response headers for the page. The Content-Security-Policy allows the one inline script (by
 * hash), Redoc's script, the document and Redoc's inline styles, and nothing else (Redoc's
 * telemetry is off and would be blocked). Where Redoc's script comes from Redocly's CDN, its
 * footer logo may too (REDOC_LOGO_ORIGIN); the local copy of the script shows a local logo.
 */
export function docsPageHeaders(options: DocsPageOptions): Record<string, string> {
  const inlineHash = `'sha256-${createHash('sha256').update(inlineScript(options)).digest('base64')}'`;
  const fromCdn = /^https?:\/\//.test(options.scriptUrl);
  const scriptSource = fromCdn ? new URL(options.scriptUrl).origin : "'self'";
  const policy = [
    "default-src 'none'",
    `script-src ${scriptSource} ${inlineHash}`,
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data:${fromCdn ? ` ${REDOC_LOGO_ORIGIN}` : ''}`,
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': policy,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  };
}
