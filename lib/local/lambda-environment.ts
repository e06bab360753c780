// The runtime's side of one Lambda execution environment (lambda-runtime.ts runs each function in
// environments of its own): it starts the worker thread (lambda-environment-worker.ts) with
// Lambda's reserved environment variables and the function's memory as its heap's bound, bounds
// its Init, sends it one invocation at a time within the function's timeout, and ends it on a
// timeout, a crash of its runtime, or when its function retires it.
//   https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
//
// Worker threads, not child processes: measured here (the authorizer bundle, Node 24, 2 shared
// cores), a worker took 150-500 ms to start and import the bundle and about 20 MB of resident
// memory; a child process 200-306 ms and 60 MB.
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { EnvironmentData, EnvironmentMessage, InvocationMessage } from './lambda-environment-worker.ts';
import { LambdaFunctionError } from './lambda-errors.ts';
import type { FunctionConfiguration } from './lambda-runtime.ts';

/** The session token of `functionName`'s environments: its execution role (see Environment). */
export function executionRoleSessionToken(functionName: string): string {
  return `local-execution-role/${functionName}`;
}

/**
 * The largest response a synchronous invocation may return, in bytes of its JSON: "6 MB each for
 * request and response" (gettingstarted-limits.html, "Invocation payload"); Lambda's error names the
 * exact figure, "Response payload size exceeded maximum allowed payload size (6291556 bytes)."
 */
export const MAX_RESPONSE_PAYLOAD_BYTES = 6_291_556;

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class Environment {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** When its Init started (Date.now()): the clock of a retried Init's invocation. */
  readonly initStartedAt = Date.now();
  /** Invocations it has started. */
  invocations = 0;
  pending: Pending | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  private ended = false;
  private onEnd: (environment: Environment) => void;

  constructor(functionName: string, configuration: FunctionConfiguration, initLimitMs: number, onEnd: (environment: Environment) => void) {
    this.onEnd = onEnd;
    const { settings } = configuration;
    // Lambda's runtime names one log stream per environment: `<date>/[$LATEST]<32 hex>`.
    const logStreamName = `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`;
    const workerData: EnvironmentData = {
      bundleUrl: configuration.bundleUrl,
      functionName,
      settings,
      logStreamName,
      maxResponseBytes: MAX_RESPONSE_PAYLOAD_BYTES,
    };
    this.worker = new Worker(new URL('./lambda-environment-worker.ts', import.meta.url), {
      workerData,
      // Not the parent's flags (tsx): the bundle is plain JavaScript and the entry erasable TypeScript.
      execArgv: [],
      // Lambda's reserved environment variables (configuration-envvars.html, "Defined runtime environment variables").
      env: {
        ...process.env,
        AWS_LAMBDA_FUNCTION_NAME: functionName,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(settings.memorySize),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
        AWS_LAMBDA_LOG_STREAM_NAME: logStreamName,
        // Lambda gives each function its execution role's session credentials. Locally the key id
        // stays the data directory's (DynamoDB Local keeps one database per key id); the session
        // token names the function's role, which DynamoDB Local ignores and a recording proxy can
        // check against the function's grants (functions/routes.ts).
        AWS_SESSION_TOKEN: executionRoleSessionToken(functionName),
        // On-demand, not provisioned: Powertools reports `cold_start: true` only under this value.
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      },
      // The function's memory as the bound of its JavaScript heap (Lambda bounds the whole process).
      resourceLimits: { maxOldGenerationSizeMb: settings.memorySize },
    });
    this.worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      const initTimer = setTimeout(
        () => reject(new LambdaFunctionError('Runtime.InitTimeout', `Init did not finish within ${initLimitMs / 1000} s`)),
        initLimitMs,
      );
      this.worker.once('message', (message: EnvironmentMessage) => {
        clearTimeout(initTimer);
        if (message.type === 'ready') resolve();
        else if (message.type === 'init-error') reject(new LambdaFunctionError(message.errorType, message.errorMessage));
      });
      this.worker.once('error', (error: Error) => {
        clearTimeout(initTimer);
        reject(new LambdaFunctionError('Runtime.ExitError', error.message));
      });
    });
    this.ready.catch(() => this.end());
    this.worker.on('message', (message: EnvironmentMessage) => {
      if (message.type !== 'result' && message.type !== 'error') return;
      const pending = this.pending;
      if (!pending) return;
      this.pending = undefined;
      clearTimeout(pending.timer);
      // The runtime hands Lambda the handler's result as JSON (a Date becomes a string, undefined members vanish).
      if (message.type === 'result') pending.resolve(message.payload === undefined ? null : JSON.parse(message.payload));
      else pending.reject(new LambdaFunctionError(message.errorType, message.errorMessage));
    });
    // An uncaught exception or a heap over the memory size ends the environment (Runtime.ExitError).
    this.worker.on('error', (error: Error) => this.fail(new LambdaFunctionError('Runtime.ExitError', error.message)));
    this.worker.on('exit', (code) => this.fail(new LambdaFunctionError('Runtime.ExitError', `The runtime exited with code ${code}`)));
  }

  /** Runs one invocation with `timeoutMs` left of the function's timeout; the environment must be ready and idle. */
  invoke(event: unknown, timeoutSeconds: number, timeoutMs = timeoutSeconds * 1000): Promise<unknown> {
    this.invocations++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // Lambda stops the invocation and resets the environment: nothing of it runs on.
        this.fail(new LambdaFunctionError('Sandbox.Timedout', `Task timed out after ${timeoutSeconds.toFixed(2)} seconds`));
      }, timeoutMs);
      this.pending = { resolve, reject, timer };
      const message: InvocationMessage = { event, timeoutMs };
      this.worker.postMessage(message);
    });
  }

  /** Fails the invocation in progress, if any, and ends the environment. */
  private fail(error: LambdaFunctionError): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    void this.worker.terminate();
    this.onEnd(this);
  }
}
