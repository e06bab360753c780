// A kiosk in the museum's hall polls the week's list (and one event) once a minute. Over one hour
// of polls through the local HTTP server: the bytes on the wire (status line, headers and
// content) when it downloads every time, and when it revalidates with If-None-Match (304 while
// nothing changed); the list changes twice in the hour. And the DynamoDB reads each way, which
// are the same: the list's validator is a hash of the page, so a 304 still reads the page, and an
// event's 304 still reads the event (its version). Also the read cost of deep pages (offsets).
import { Agent, request } from 'node:http';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { EventsReader } from '../../functions/store/events-store.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { basicAuthorization, BENCH_PRINCIPAL } from '../support/api-events.ts';
import { BENCH_PASSWORD } from '../support/bench-tables.ts';
import type { Window } from '../list-scaling/dataset.ts';

export interface KioskPolling {
  name: string;
  polls: number;
  /** Bytes of the answers when every poll downloads. */
  bytesFull: number;
  /** Bytes of the answers when every poll revalidates. */
  bytesRevalidating: number;
  notModified: number;
  /** Read capacity of the polls, the same both ways. */
  readCapacity: number;
}

export interface KioskResult {
  polls: KioskPolling[];
  /** Read capacity of page p of the window with limit 1: each page reads the ones before it. */
  pageDepth: { page: number; limit: number; readCapacity: number }[];
}

interface WireAnswer {
  status: number;
  bytes: number;
  etag: string | undefined;
  body: string;
}

export async function measureKiosk(url: string, endpoint: string, table: string, window: Window, polls = 60): Promise<KioskResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(url);
  const authorization = basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD);
  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<WireAnswer>((resolve, reject) => {
      const outgoing = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: `${base.pathname}${path}`,
          headers: { Authorization: authorization, ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const content = Buffer.concat(chunks);
            // What travelled: the status line, each header line, the blank line, the content.
            let headerBytes = Buffer.byteLength(`HTTP/1.1 ${response.statusCode} ${response.statusMessage}\r\n\r\n`);
            for (let i = 0; i < response.rawHeaders.length; i += 2)
              headerBytes += Buffer.byteLength(`${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}\r\n`);
            resolve({
              status: response.statusCode ?? 0,
              bytes: headerBytes + content.length,
              etag: response.headers.etag,
              body: content.toString('utf8'),
            });
          });
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const raw = localClient(endpoint);
  const store = new EventsReader(createDocumentClient(raw), table);
  try {
    const listPath = `/special-events?startDate=${window.startDate}&endDate=${window.endDate}&limit=30`;
    const first = await send('GET', listPath);
    if (first.status !== 200) throw new Error(`The kiosk's list answered ${first.status}: ${first.body.slice(0, 200)}`);
    const events = JSON.parse(first.body) as { eventId: string }[];
    const changed = events[0];
    if (!changed) throw new Error('The kiosk window holds no event');
    const eventPath = `/special-events/${changed.eventId}`;
    const listReads = (await store.listEvents({ ...window, page: 1, limit: 30 })).consumedReadCapacity;
    // One strongly consistent GetItem of an item under 4 KB.
    const eventReads = 1;

    const poll = async (name: string, path: string, reads: number, changeAt: number[]): Promise<KioskPolling> => {
      let bytesFull = 0;
      let bytesRevalidating = 0;
      let notModified = 0;
      let etag: string | undefined;
      let price = 1;
      for (let minute = 0; minute < polls; minute++) {
        if (changeAt.includes(minute)) {
          const patched = await send('PATCH', eventPath, { 'Content-Type': 'application/json' }, JSON.stringify({ price: (price += 1) }));
          if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}`);
        }
        const full = await send('GET', path);
        bytesFull += full.bytes;
        const revalidated = await send('GET', path, etag ? { 'If-None-Match': etag } : {});
        bytesRevalidating += revalidated.bytes;
        if (revalidated.status === 304) notModified += 1;
        else if (revalidated.status === 200) etag = revalidated.etag;
        else throw new Error(`${name} answered ${revalidated.status}`);
      }
      return { name, polls, bytesFull, bytesRevalidating, notModified, readCapacity: polls * reads };
    };

    const result: KioskResult = {
      polls: [
        await poll("the week's list (limit 30), changed twice in the hour", listPath, listReads, [20, 40]),
        await poll('one event, changed twice in the hour', eventPath, eventReads, [20, 40]),
      ],
      pageDepth: [],
    };
    for (const page of [1, 10, 25]) {
      result.pageDepth.push({ page, limit: 1, readCapacity: (await store.listEvents({ ...window, page, limit: 1 })).consumedReadCapacity });
    }
    return result;
  } finally {
    agent.destroy();
    raw.destroy();
  }
}
