// Lambda's execution model for the local run: each function runs in execution environments of its
// own (worker threads: separate module state, one invocation at a time each). An invocation takes
// a warm idle environment, or starts a new one (a cold start: Init imports the bundle) when all
// are busy, up to the function's reserved concurrency; beyond it the invocation is throttled
// (TooManyRequestsException), never queued. An Init over its 10 s limit is retried within the
// invocation, sharing the function's timeout with it. An invocation that outlives the function's timeout
// fails with "Task timed out" and its environment is reset (the next one starts cold). An
// environment left idle is retired after ENVIRONMENT_IDLE_MS. Memory, timeout and reserved
// concurrency come from FUNCTION_SETTINGS, which the CDK stack deploys.
//   https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
//   https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html
//   https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
//
// Worker threads, not child processes: measured here (8 environments of the authorizer bundle, Node
// 24, 2 shared cores), a worker took a median 111-154 ms to start and import the bundle and added
// about 3 MB of resident memory; a child process 200-306 ms and 60 MB. What workers share that
// Lambda environments do not: the machine's CPUs and libuv's thread pool (4 threads, where scrypt
// runs), so concurrent environments are slower here than deployed, never faster.
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { EnvironmentData, EnvironmentMessage, InvocationMessage } from './lambda-environment-worker.ts';

/**
 * How long an idle environment is kept. Lambda "maintains the execution environment for some time
 * in anticipation of another function invocation" and publishes no figure
 * (lambda-runtime-environment.html); five minutes is within what is commonly observed, and long
 * enough that a local burst's environments serve the next burst warm.
 */
export const ENVIRONMENT_IDLE_MS = 5 * 60_000;

/**
 * Lambda's limit on the Init phase: "If all three tasks do not complete within 10 seconds, Lambda
 * retries the Init phase at the time of the first function invocation with the configured function
 * timeout" (lambda-runtime-environment.html, "Init phase").
 */
const INIT_LIMIT_MS = 10_000;

/** The deployed settings of a function (a FUNCTION_SETTINGS row). */
export interface FunctionSettings {
  memorySize: number;
  timeoutSeconds: number;
  reservedConcurrency?: number;
}

export interface LambdaFunctionOptions {
  functionName: string;
  /** file: URL of the bundle (dist/functions/<name>/index.mjs). */
  bundleUrl: string;
  settings: FunctionSettings;
  /** Overrides ENVIRONMENT_IDLE_MS (tests). */
  idleMs?: number;
  /** Overrides INIT_LIMIT_MS (tests). */
  initLimitMs?: number;
}

/** Lambda refused the invocation: the function's reserved concurrency is in use (HTTP 429 from Lambda's Invoke API). */
export class LambdaThrottledError extends Error {
  readonly reason = 'ReservedFunctionConcurrentInvocationLimitExceeded';
  constructor(functionName: string) {
    super(`Rate Exceeded. (${functionName}: reserved concurrency in use)`);
    this.name = 'TooManyRequestsException';
  }
}

/** The invocation ran and failed (FunctionError: Unhandled): the handler threw, timed out, or its environment died. */
export class LambdaFunctionError extends Error {
  readonly errorType: string;
  readonly errorMessage: string;
  constructor(errorType: string, errorMessage: string) {
    super(errorMessage);
    this.name = 'LambdaFunctionError';
    this.errorType = errorType;
    this.errorMessage = errorMessage;
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

class Environment {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  pending: Pending | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  private nextId = 0;
  private ended = false;
  private onEnd: (environment: Environment) => void;

  constructor(options: LambdaFunctionOptions, initLimitMs: number, onEnd: (environment: Environment) => void) {
    this.onEnd = onEnd;
    // Lambda's runtime names one log stream per environment: `<date>/[$LATEST]<32 hex>`.
    const logStreamName = `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomBytes(16).toString('hex')}`;
    const workerData: EnvironmentData = {
      bundleUrl: options.bundleUrl,
      functionName: options.functionName,
      settings: options.settings,
      logStreamName,
    };
    this.worker = new Worker(new URL('./lambda-environment-worker.ts', import.meta.url), {
      workerData,
      // Not the parent's flags (tsx): the bundle is plain JavaScript and the entry erasable TypeScript.
      execArgv: [],
      // Lambda's reserved environment variables (configuration-envvars.html, "Defined runtime environment variables").
      env: {
        ...process.env,
        AWS_LAMBDA_FUNCTION_NAME: options.functionName,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(options.settings.memorySize),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${options.functionName}`,
        AWS_LAMBDA_LOG_STREAM_NAME: logStreamName,
        // On-demand, not provisioned: Powertools reports `cold_start: true` only under this value.
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      },
      // The function's memory as the bound of its JavaScript heap (Lambda bounds the whole process).
      resourceLimits: { maxOldGenerationSizeMb: options.settings.memorySize },
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
      if (message.type === 'result') pending.resolve(message.result);
      else pending.reject(new LambdaFunctionError(message.errorType, message.errorMessage));
    });
    // An uncaught exception or a heap over the memory size ends the environment (Runtime.ExitError).
    this.worker.on('error', (error: Error) => this.fail(new LambdaFunctionError('Runtime.ExitError', error.message)));
    this.worker.on('exit', (code) => this.fail(new LambdaFunctionError('Runtime.ExitError', `The runtime exited with code ${code}`)));
  }

  /** Runs one invocation with `timeoutMs` left of the function's timeout; the environment must be ready and idle. */
  invoke(event: unknown, timeoutSeconds: number, timeoutMs = timeoutSeconds * 1000): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        // Lambda stops the invocation and resets the environment: nothing of it runs on.
        this.fail(new LambdaFunctionError('Sandbox.Timedout', `Task timed out after ${timeoutSeconds.toFixed(2)} seconds`));
      }, timeoutMs);
      this.pending = { resolve, reject, timer };
      const message: InvocationMessage = { id: this.nextId++, event, timeoutMs };
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

/** One Lambda function of the local run and its execution environments. */
export class LambdaFunction {
  readonly functionName: string;
  private readonly options: LambdaFunctionOptions;
  private readonly idleMs: number;
  private readonly initLimitMs: number;
  /** Warm environments waiting for an invocation, the most recently used last. */
  private readonly idle: Environment[] = [];
  private readonly all = new Set<Environment>();
  private inFlight = 0;
  /** Environments retireEnvironments() ends once their invocation is over. */
  private readonly retired = new WeakSet<Environment>();
  /** Environments started so far (cold starts), for tests and figures. */
  coldStarts = 0;

  constructor(options: LambdaFunctionOptions) {
    this.options = options;
    this.functionName = options.functionName;
    this.idleMs = options.idleMs ?? ENVIRONMENT_IDLE_MS;
    this.initLimitMs = options.initLimitMs ?? INIT_LIMIT_MS;
  }

  /** Environments that exist now, busy or idle. */
  get environments(): number {
    return this.all.size;
  }

  /**
   * Invokes the function synchronously (RequestResponse), as API Gateway does. Rejects with
   * LambdaThrottledError over the reserved concurrency and with LambdaFunctionError when the
   * invocation fails.
   */
  async invoke<R>(event: unknown): Promise<R> {
    const reserved = this.options.settings.reservedConcurrency;
    if (reserved !== undefined && this.inFlight >= reserved) throw new LambdaThrottledError(this.functionName);
    this.inFlight++;
    let environment: Environment | undefined;
    try {
      // The most recently used: the others age towards retirement, as a burst's extra environments do.
      environment = this.idle.pop() ?? this.start(this.initLimitMs);
      clearTimeout(environment.idleTimer);
      const { timeoutSeconds } = this.options.settings;
      try {
        await environment.ready;
      } catch (error) {
        // Init outlived its limit: retried in a new environment within the invocation, the two
        // sharing the function's timeout.
        if (!(error instanceof LambdaFunctionError) || error.errorType !== 'Runtime.InitTimeout') throw error;
        const started = Date.now();
        environment = this.start(timeoutSeconds * 1000);
        await environment.ready;
        return (await environment.invoke(event, timeoutSeconds, timeoutSeconds * 1000 - (Date.now() - started))) as R;
      }
      return (await environment.invoke(event, timeoutSeconds)) as R;
    } finally {
      this.inFlight--;
      // Warm again, also after a handler error; an environment a timeout or crash ended is gone.
      if (environment) this.release(environment);
    }
  }

  /**
   * Retires every environment: the idle ones end now, the busy ones when their invocation ends, so
   * the next invocation starts a new one that loads the bundle afresh (the local run's --watch,
   * after a rebuild). Lambda does the same on a code update: new invocations get new environments.
   */
  retireEnvironments(): void {
    for (const environment of this.all) this.retired.add(environment);
    for (const environment of [...this.idle]) environment.end();
  }

  /** Ends every environment (the local API stops). */
  close(): void {
    for (const environment of [...this.all]) environment.end();
  }

  private start(initLimitMs: number): Environment {
    this.coldStarts++;
    const environment = new Environment(this.options, initLimitMs, (ended) => {
      this.all.delete(ended);
      const index = this.idle.indexOf(ended);
      if (index >= 0) this.idle.splice(index, 1);
    });
    this.all.add(environment);
    return environment;
  }

  private release(environment: Environment): void {
    if (!this.all.has(environment)) return;
    if (this.retired.has(environment)) {
      environment.end();
      return;
    }
    environment.idleTimer = setTimeout(() => environment.end(), this.idleMs);
    environment.idleTimer.unref();
    this.idle.push(environment);
  }
}
