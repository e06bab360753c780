// Response compression as the deployed REST API does it (minimumCompressionSize): an answer of
// at least MINIMUM_COMPRESSION_BYTES is sent gzip- or deflate-coded when the client's
// Accept-Encoding allows it, never for HEAD, 204 or 304 (no body), nor when the answer is already
// content-coded. API Gateway's codings are gzip, deflate and identity; br is not offered, so
// that a client sees locally what it will see deployed. Written here rather than taken from a
// compression middleware (express's `compression`): the local server is plain node:http, and
// what is needed is the one decision below plus node:zlib.
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import { MINIMUM_COMPRESSION_BYTES } from '../../functions/events/limits.ts';
import { headerKey, headerValue, withoutHeaders } from '../../functions/http/header-lookup.ts';

const CODERS = { gzip: promisify(gzip), deflate: promisify(deflate) } as const;
type Coding = keyof typeof CODERS;

/**
 * The coding to use for `acceptEncoding` (RFC 9110 §12.5.3): the highest q-value among gzip and
 * deflate (named, or through `*`), gzip on a tie; none when neither is acceptable (q=0 or absent).
 */
export function chooseCoding(acceptEncoding: string | undefined): Coding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const member of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = member.split(';').map((part) => part.trim().toLowerCase());
    if (!name) continue;
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter));
    const weight = q === undefined ? 1 : Number(q.replace(/^q\s*=\s*/, ''));
    weights.set(name, Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0);
  }
  let best: Coding | undefined;
  let bestWeight = 0;
  for (const coding of ['gzip', 'deflate'] as const) {
    const weight = weights.get(coding) ?? (coding === 'gzip' ? weights.get('x-gzip') : undefined) ?? weights.get('*') ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

type Headers = Record<string, string | string[]>;

/** Adds Accept-Encoding to the Vary header the answer already has (or starts one). */
function withVary(headers: Headers): Headers {
  const key = headerKey(headers, 'vary');
  const existing = key ? [headers[key]].flat().join(', ') : '';
  if (/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(existing)) return headers;
  const rest = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== key));
  return { ...rest, Vary: existing ? `${existing}, Accept-Encoding` : 'Accept-Encoding' };
}

/**
 * Writes the answer, compressed when the deployed API would compress it. Answers that have a body
 * and could be compressed carry `Vary: Accept-Encoding` whether or not this one is, so that a
 * cache does not hand a gzip body to a client that did not ask for it, or the reverse.
 */
export async function sendAnswer(response: ServerResponse, statusCode: number, headers: Headers, body?: string | Buffer): Promise<number> {
  const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const request = response.req;
  const eligible =
    bytes !== undefined &&
    bytes.length >= MINIMUM_COMPRESSION_BYTES &&
    request.method !== 'HEAD' &&
    statusCode !== 204 &&
    statusCode !== 304 &&
    statusCode >= 200 &&
    !headerValue(headers, 'content-encoding');
  if (!eligible) {
    response.writeHead(statusCode, headers);
    response.end(bytes);
    return statusCode;
  }
  const coding = chooseCoding(request.headers['accept-encoding']);
  const varied = withVary(headers);
  if (!coding) {
    response.writeHead(statusCode, varied);
    response.end(bytes);
    return statusCode;
  }
  const coded = await CODERS[coding](bytes);
  const withoutLength = withoutHeaders(varied, ['content-length']);
  response.writeHead(statusCode, { ...withoutLength, 'Content-Encoding': coding, 'Content-Length': String(coded.length) });
  response.end(coded);
  return statusCode;
}
