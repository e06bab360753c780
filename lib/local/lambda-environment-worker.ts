// One Lambda execution environment of the local run (lambda-environment.ts starts it as a worker
// thread): its Init phase imports the function's bundle once, then it runs the invocations it is
// sent, one at a time, each with a context of its own. Module state (caches, clients, Powertools'
// cold-start flag) lives as long as this environment, as it does in Lambda.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
// Loaded by Node's own type stripping (no tsx in the environment): erasable TypeScript only.
import { parentPort, workerData } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { lambdaContext, type ContextSettings } from './lambda-context.ts';

export interface EnvironmentData {
  bundleUrl: string;
  functionName: string;
  settings: ContextSettings;
  logStreamName: string;
  /** Lambda's response payload limit (MAX_RESPONSE_PAYLOAD_BYTES), in bytes of the result's JSON. */
  maxResponseBytes: number;
}

/** What the environment tells the runtime. */
export type EnvironmentMessage =
  | { type: 'ready' }
  | { type: 'init-error'; errorType: string; errorMessage: string }
  | { type: 'result'; payload: string | undefined }
  | { type: 'error'; errorType: string; errorMessage: string };

/** One invocation, as the runtime sends it, with the time left of the function's timeout (less than all of it after a retried Init). */
export interface InvocationMessage {
  event: unknown;
  timeoutMs: number;
}

type Handler = (event: unknown, context: Context) => Promise<unknown>;

const port = parentPort;
if (!port) throw new Error('lambda-environment-worker.ts runs only as a worker thread (lambda-runtime.ts)');
const data = workerData as EnvironmentData;
const post = (message: EnvironmentMessage) => port.postMessage(message);
/** JSON.stringify as it behaves: undefined (a handler that returns nothing) has no JSON. */
const toJson: (value: unknown) => string | undefined = JSON.stringify;
const failure = (error: unknown) =>
  error instanceof Error ? { errorType: error.name, errorMessage: error.message } : { errorType: 'Error', errorMessage: String(error) };

let handler: Handler | undefined;
try {
  handler = ((await import(data.bundleUrl)) as { handler?: Handler }).handler;
  if (typeof handler !== 'function')
    throw Object.assign(new Error(`${data.functionName}: the bundle exports no handler`), { name: 'Runtime.HandlerNotFound' });
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'init-error', ...failure(error) });
}

port.on('message', (message: InvocationMessage) => {
  const run = handler;
  if (!run) return;
  run(
    message.event,
    lambdaContext(data.functionName, { ...data.settings, timeoutSeconds: message.timeoutMs / 1000 }, data.logStreamName),
  ).then(
    (result) => {
      // The runtime sends Lambda the result as JSON, and Lambda refuses one over its payload limit:
      // the invocation fails as a function error (gettingstarted-limits.html, "Invocation payload").
      let payload: string | undefined;
      try {
        payload = toJson(result);
      } catch (error) {
        post({ type: 'error', ...failure(error) });
        return;
      }
      if (payload !== undefined && Buffer.byteLength(payload) > data.maxResponseBytes)
        post({
          type: 'error',
          errorType: 'Function.ResponseSizeTooLarge',
          errorMessage: `Response payload size exceeded maximum allowed payload size (${data.maxResponseBytes} bytes).`,
        });
      else post({ type: 'result', payload });
    },
    (error: unknown) => post({ type: 'error', ...failure(error) }),
  );
});
