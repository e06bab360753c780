// `GET /v1.1`: the API's front door, so the base URL a user is given is not a dead end. A small
// JSON index plus RFC 8631 `Link` headers pointing at the machine-readable description
// (service-desc) and the human docs (service-doc). The local API and the deployed one (a MOCK
// integration) serve these same bytes; URLs are relative to `/v1.1/` so they hold behind a
// custom domain, the `/{stage}` prefix of an execute-api URL, and any local port.
import { API_VERSION, BASE_PATH } from '../../functions/routes.ts';
import type { StaticDocument } from './mock-answers.ts';

/** Relative to the base path with its trailing slash (`/v1.1/`). */
const SERVICE_DESC = 'openapi.json';
const SERVICE_DOC = 'docs';

export interface ServiceIndex {
  name: string;
  version: string;
  links: { 'service-desc': string; 'service-doc': string; 'special-events': string };
}

/** The index body. Links are relative to the document (`/v1.1`), as RFC 3986 resolves them. */
export function serviceIndex(): ServiceIndex {
  const base = `${BASE_PATH.split('/').pop()}/`; // `v1.1/`: `/v1.1` resolves relative URLs against `/`
  return {
    name: 'Museum Special Events API',
    version: API_VERSION,
    links: {
      'service-desc': `${base}${SERVICE_DESC}`,
      'service-doc': `${base}${SERVICE_DOC}`,
      'special-events': `${base}special-events`,
    },
  };
}

/** Response headers of the index, RFC 8631 links included (relative to the request URL, as the body's). */
export function serviceIndexHeaders(): Record<string, string> {
  const { links } = serviceIndex();
  return {
    'Content-Type': 'application/json',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-cache',
    Link: [
      `<${links['service-desc']}>; rel="service-desc"; type="application/openapi+json"`,
      `<${links['service-doc']}>; rel="service-doc"; type="text/html"`,
    ].join(', '),
  };
}

/** `GET /v1.1`: the index as the gateway serves it (the resource itself, so no path below it). */
export function serviceIndexDocument(): StaticDocument {
  return { path: '', headers: serviceIndexHeaders(), body: JSON.stringify(serviceIndex()) };
}
