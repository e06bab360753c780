// The served contract: /v1.1/openapi.json and the Redoc page at /v1.1/docs, without credentials,
// and the page really rendering in headless Chromium (Debian's chromium, driven by playwright-core).
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { routes } from '../../functions/routes.ts';
import {
  docsPageHeaders,
  docsPageHtml,
  DOCS_SPEC_URL,
  redocBundleIntegrity,
  redocCdnUrl,
  redocVersion,
} from '../../lib/openapi/docs-page.ts';
import { COMMITTED_OPENAPI_FILE } from '../support/contract.ts';
import { testEnvironment } from '../support/test-environment.ts';
import { launchChromium } from '../support/chromium.ts';

/** The tag each route's operation carries in the committed document (Redoc groups the menu by it). */
const committedDocument = JSON.parse(readFileSync(COMMITTED_OPENAPI_FILE, 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
};
const tagOf = (route: (typeof routes)[number]): string => {
  const operation = Object.values(committedDocument.paths)
    .flatMap((methods) => Object.values(methods))
    .find((candidate) => candidate.operationId === route.operationId);
  return operation?.tags?.[0] ?? '';
};

describe('GET /v1.1/openapi.json', () => {
  test('serves the committed document as JSON without credentials, in the minified form the deployed MOCK serves', async () => {
    const response = await fetch(`${testEnvironment().url}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(COMMITTED_OPENAPI_FILE, 'utf8')));
    // The mapping template's output: the document, then the newline that ends its template line.
    expect(text).toBe(`${JSON.stringify(JSON.parse(text))}\n`);
  });
});

describe('GET /v1.1/docs without JavaScript', () => {
  test('links the OpenAPI document, so a reader without JavaScript still reaches the description', async () => {
    const page = await (await fetch(`${testEnvironment().url}/docs`)).text();
    const link = /<noscript>.*<a href="([^"]+)">openapi\.json<\/a>.*<\/noscript>/s.exec(page)?.[1];
    expect(link).toBe(DOCS_SPEC_URL);
    const target = await fetch(new URL(link ?? '', `${testEnvironment().url}/docs`));
    expect([target.status, target.headers.get('content-type')]).toEqual([200, 'application/json']);
  });
});

describe('the docs page HTML', () => {
  test('is a pure function of the script and document URLs, with the inline script pinned by the CSP', () => {
    const options = { scriptUrl: redocCdnUrl('3.0.1'), specUrl: DOCS_SPEC_URL, scriptIntegrity: 'sha384-abc' };
    expect(docsPageHtml(options)).toBe(docsPageHtml({ ...options }));
    expect(docsPageHtml(options)).toContain('import { init } from "https://cdn.redocly.com/redoc/v3.0.1/bundles/redoc.standalone.js"');
    expect(docsPageHtml(options)).toContain('integrity="sha384-abc"');
    expect(docsPageHeaders(options)['Content-Security-Policy']).toMatch(
      /script-src https:\/\/cdn\.redocly\.com 'sha256-[A-Za-z0-9+/]+={0,2}'/,
    );
    expect(docsPageHtml({ scriptUrl: './r.js', specUrl: '</script><script>alert(1)</script>' })).not.toContain('</script><script>');
  });

  test('names the Redoc version of the bundled script and its SRI hash', () => {
    expect(redocVersion()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(redocBundleIntegrity()).toMatch(/^sha384-[A-Za-z0-9+/]{64}$/);
  });
});

describe('GET /v1.1/docs in headless Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
    await browser?.close();
  });

  test('renders the document with Redoc and lists every operation under its tag, contacting no other host', async () => {
    const page = await browser.newPage();
    const failures: string[] = [];
    const external: string[] = [];
    page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // Not even Redoc's footer logo: the local bundle shows a local one.
      if (message.type() === 'error') failures.push(`console error: ${message.text()}`);
    });
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      external.push(url.href);
      return route.abort();
    });

    const response = await page.goto(`${testEnvironment().url}/docs`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");

    await page.getByRole('heading', { level: 1, name: 'Museum Special Events API (1.1.1)' }).waitFor({ timeout: 30_000 });
    // The overview lists each operation's method and path (rendered after the title).
    const operationLines = routes.map((route) => `${route.method}\n${route.path}`);
    await page.waitForFunction(
      (lines) => {
        // Runs in the page (the page's CSP forbids evaluating strings; this project has no DOM types).
        const page = globalThis as unknown as {
          scrollTo(x: number, y: number): void;
          document: { body: { innerText: string; scrollHeight: number } };
        };
        // Redoc renders sections as they scroll into view: scroll as a reader would, past the introduction.
        page.scrollTo(0, page.document.body.scrollHeight);
        const text = page.document.body.innerText;
        return lines.every((line) => text.includes(line));
      },
      operationLines,
      { timeout: 30_000 },
    );

    // The side menu lists the operations by summary under their tag (the committed document's).
    // Each tag's items are counted when its group is open, in one read of the page: Redoc keeps only
    // the open groups' items in the DOM, and on a loaded machine its scroll-spy can close a group
    // soon after another is opened.
    const counts = new Map<string, number>();
    // The special events' tag last: the checks below read its section.
    for (const tag of [...new Set(routes.map(tagOf))].reverse()) {
      await page.getByRole('link', { name: tag, exact: true }).click();
      const summaries = routes.filter((route) => tagOf(route) === tag).map((route) => route.summary);
      const read = await page.waitForFunction(
        (wanted: string[]) => {
          const page = globalThis as unknown as {
            document: { querySelectorAll(selector: string): Iterable<{ textContent: string | null }> };
          };
          const labels = [...page.document.querySelectorAll('[data-testid="menu-item-label"]')].map((label) =>
            (label.textContent ?? '').replace(/\s+/g, ' ').trim(),
          );
          const found = wanted.map((summary) => labels.filter((label) => label.startsWith(summary)).length);
          return found.every((count) => count > 0) && found;
        },
        summaries,
        { timeout: 30_000 },
      );
      const found = (await read.jsonValue()) as number[];
      summaries.forEach((summary, i) => counts.set(summary, found[i] ?? 0));
    }
    expect(routes.map((route) => counts.get(route.summary))).toEqual(routes.map(() => 1));
    await page.getByRole('heading', { level: 2, name: 'Create special event' }).waitFor();
    // The Servers box names the server the page came from (its real port), not the default port's entry.
    const html = await page.content();
    expect(html).toContain(testEnvironment().url);
    if (new URL(testEnvironment().url).port !== '3000') expect(html).not.toContain('127.0.0.1:3000');

    expect(failures).toEqual([]);
    expect(external).toEqual([]);
  });
});
