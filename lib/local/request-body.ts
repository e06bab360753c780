// A request body as API Gateway reads it: at most 10 MB on the wire, then decoded per its
// Content-Encoding, as a stream, before the API is identified and so before the authorizer
// ("the early phase of decompression before your API and stage are identified":
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-make-request-with-compressed-payload.html).
// Decoding runs in zlib's streams (libuv's thread pool), never synchronously on the event loop,
// and stops as soon as any stage's output passes the limit: a 500-byte body that inflates to
// 200 MiB costs at most the limit and is refused at once, while other requests are answered.
import type { IncomingMessage } from 'node:http';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createInflate } from 'node:zlib';
import { headerLines } from '../../functions/http/header-lookup.ts';
import { MALFORMED_BODY } from './http-server.ts';

/** How a body is refused: each names the answer the gateway gives. */
export interface BodyRefusals {
  /** Over the limit, on the wire or once decoded. */
  tooLarge: () => Error;
  /** A coding API Gateway does not decode, bytes not so coded, or more codings than MAX_CODINGS. */
  unsupported: () => Error;
  /** The body's HTTP/1.1 framing is broken (a chunk size that is not hex). */
  malformed: () => Error;
}

/**
 * The codings API Gateway decodes (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-enable-compression.html#api-gateway-supported-content-encodings).
 * AWS says nothing of lists (`gzip, gzip`): they are decoded in order, at most this many, each
 * stage bounded by the limit; more is refused like an unsupported coding. Unverified choice.
 */
export const MAX_CODINGS = 4;

/** The Content-Encoding codings of `request`, every field line, in the order they were applied. */
export function contentCodings(request: Pick<IncomingMessage, 'rawHeaders'>): string[] {
  return headerLines(request.rawHeaders, 'content-encoding')
    .flatMap((line) => line.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** Passes bytes on until more than `maxBytes` have gone through, then fails with `tooLarge()`. */
class ByteLimit extends Transform {
  /** Bytes passed so far. */
  seen = 0;
  private readonly maxBytes: number;
  private readonly tooLarge: () => Error;
  constructor(maxBytes: number, tooLarge: () => Error) {
    super();
    this.maxBytes = maxBytes;
    this.tooLarge = tooLarge;
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.maxBytes) callback(new BodyRefused(this.tooLarge()));
    else callback(null, chunk);
  }
}

/** A refusal decided by the limit, told apart from a decoder's own error (bytes not so coded). */
class BodyRefused extends Error {
  readonly refusal: Error;
  constructor(refusal: Error) {
    super(refusal.message);
    this.refusal = refusal;
  }
}

/**
 * The request body, decoded: refused with `tooLarge()` once more than `maxBytes` arrive or any
 * decoding stage produces more than `maxBytes` (AWS documents the 10 MB payload limit, not
 * whether it also bounds the decoded body: the same limit after decoding is our choice, and
 * Lambda's 6 MB limit applies to the event built from it), with `unsupported()` for a coding
 * API Gateway does not decode or bytes not so coded (415), with `malformed()` for broken framing.
 * An empty body is not decoded. When refused, the rest of the request is read and discarded so the
 * answer can be sent on the same connection.
 */
export async function readDecodedBody(request: IncomingMessage, maxBytes: number, refusals: BodyRefusals): Promise<Buffer> {
  const codings = contentCodings(request);
  if (codings.length > MAX_CODINGS || codings.some((coding) => coding !== 'gzip' && coding !== 'deflate')) {
    request.resume();
    throw refusals.unsupported();
  }
  const wire = new ByteLimit(maxBytes, refusals.tooLarge);
  const stages: (Transform | Writable)[] = [wire];
  // Codings are listed in the order they were applied: decode from the last.
  for (const coding of codings.toReversed())
    stages.push(coding === 'gzip' ? createGunzip() : createInflate(), new ByteLimit(maxBytes, refusals.tooLarge));
  const chunks: Buffer[] = [];
  let size = 0;
  stages.push(
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        size += chunk.length;
        callback();
      },
    }),
  );
  // The request itself stays out of the pipeline: destroying it would close the connection before
  // the refusal could be sent.
  let framing: Error | undefined;
  const onError = (error: NodeJS.ErrnoException) => {
    framing = error.code === MALFORMED_BODY ? refusals.malformed() : error;
    wire.destroy(framing);
  };
  request.on('error', onError);
  request.pipe(wire);
  try {
    await pipeline(stages as [Transform, ...Transform[], Writable]);
  } catch (error) {
    request.unpipe(wire);
    request.resume();
    if (framing) throw framing;
    if (error instanceof BodyRefused) throw error.refusal;
    // An empty body under a coding is no coded body: nothing to decode.
    if (wire.seen === 0) return Buffer.alloc(0);
    throw refusals.unsupported();
  } finally {
    request.removeListener('error', onError);
  }
  return Buffer.concat(chunks, size);
}
