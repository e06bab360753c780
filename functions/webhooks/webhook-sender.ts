// One delivery attempt: POST the change to the receiver, signed as the Standard Webhooks
// specification says (npm `standardwebhooks` signs: `v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>`,
// one per valid secret, space-separated), connecting only to the address the URL rules checked,
// following no redirect, reading at most RESPONSE_BYTES of the answer, all within ATTEMPT_TIMEOUT_MS.
// Written on node:http rather than fetch: fetch cannot pin the connection to a checked address.
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { parseWebhookUrl, resolveWebhookAddress, WebhookUrlRefused, type CheckedAddress } from './webhook-url.ts';

/** No answer within this is a failed attempt (retried). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** The most of a receiver's answer that is read (and then dropped). */
export const RESPONSE_BYTES = 64 * 1024;
export const DELIVERY_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';

export interface AttemptResult {
  status?: number;
  error?: string;
  durationMs: number;
}

/** The three Standard Webhooks headers of one attempt, signed with every secret in `secrets`. */
export function signedHeaders(id: string, body: string, secrets: readonly string[], timestampSeconds: number): Record<string, string> {
  const timestamp = new Date(timestampSeconds * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' '),
  };
}

function pinnedLookup(checked: CheckedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [checked]);
    else callback(null, checked.address, checked.family);
  };
}

export async function sendWebhook(urlText: string, id: string, body: string, secrets: readonly string[]): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let checked: CheckedAddress;
  let url: URL;
  try {
    url = parseWebhookUrl(urlText);
    checked = await resolveWebhookAddress(url);
  } catch (error) {
    if (error instanceof WebhookUrlRefused) return { error: `URL refused: ${error.message}`, durationMs: elapsed() };
    throw error;
  }
  const headers = {
    'Content-Type': DELIVERY_CONTENT_TYPE,
    'User-Agent': 'museum-special-events-webhooks/1',
    ...signedHeaders(id, body, secrets, Math.floor(Date.now() / 1000)),
  };
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      resolve({ ...result, durationMs: elapsed() });
    };
    const outgoing = request(
      {
        method: 'POST',
        host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
        lookup: pinnedLookup(checked),
        agent: false,
        ...(url.protocol === 'https:' && isIP(host) === 0 ? { servername: host } : {}),
      },
      (response: IncomingMessage) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > RESPONSE_BYTES) finish({ status: response.statusCode ?? 0 });
        });
        response.on('end', () => finish({ status: response.statusCode ?? 0 }));
        response.on('error', () => finish({ status: response.statusCode ?? 0 }));
      },
    );
    const timer = setTimeout(() => finish({ error: `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` }), ATTEMPT_TIMEOUT_MS);
    outgoing.on('error', (error: NodeJS.ErrnoException) => finish({ error: `${error.code ?? 'error'}: ${error.message}` }));
    outgoing.end(body);
  });
}
