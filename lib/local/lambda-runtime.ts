// Lambda's execution model for the local run: each function runs in execution environments of its
// own (worker threads: separate module state, one invocation at a time each). An invocation takes
// a warm idle environment, or a new one (a cold start: Init imports the bundle) when all are busy.
// Concurrency is counted as Lambda counts it: a function with reserved concurrency is throttled
// over its reservation, the others share the account's unreserved concurrency (the regional quota
// less every reservation); beyond it an invocation is refused (TooManyRequestsException), never
// queued. An Init over its 10 s limit is retried within the invocation, sharing the function's
// timeout with it. An invocation that outlives the function's timeout fails with "Task timed out"
// and its environment is reset (the next one starts cold). A response over Lambda's 6 MB payload
// limit fails the invocation. An environment left idle is retired after ENVIRONMENT_IDLE_MS.
// Memory, timeout and reserved concurrency come from the FUNCTION_SETTINGS rows the CDK stack deploys.
//   https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
//   https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html
//   https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
//   https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
//
// Where two shared cores cannot be many Lambda environments: Lambda runs each environment's Init
// and invocations on CPU of its own, and measures the 10 s Init limit and the function timeout
// there. Here every environment shares the machine's cores (and libuv's thread pool), so a burst
// of cold starts all at once would have each Init take the sum of all of them (measured: 20 Inits
// of the authorizer at once, 10-11 s each; 100 at once, over 1.9 GB). So at most one environment
// per core initialises at a time (InitSlots), and an Init's clock starts when its Init starts; an
// invocation waiting for a new environment takes the first of its function's environments to
// become free instead, if one does before an Init slot. Each invocation's timeout runs from the
// moment its environment starts it, as Lambda's does. The difference: under a burst the local run
// starts fewer environments than Lambda would (fewer cold starts, later answers), never more
// failures. docs/FIDELITY.md, "Local difference".
//
// Worker threads, not child processes: measured here (the authorizer bundle, Node 24, 2 shared
// cores), a worker took 150-500 ms to start and import the bundle and about 20 MB of resident
// memory; a child process 200-306 ms and 60 MB.
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { EnvironmentData, EnvironmentMessage, InvocationMessage } from './lambda-environment-worker.ts';

/** The session token of `functionName`'s environments: its execution role (see Environment). */
export function executionRoleSessionToken(functionName: string): string {
  return `local-execution-role/${functionName}`;
}

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

/** Lambda's default quota of concurrent executions per account and region (gettingstarted-limits.html, "Concurrent executions"). */
export const ACCOUNT_CONCURRENT_EXECUTIONS = 1_000;

/**
 * The largest response a synchronous invocation may return, in bytes of its JSON: "6 MB each for
 * request and response" (gettingstarted-limits.html, "Invocation payload"); Lambda's error names the
 * exact figure, "Response payload size exceeded maximum allowed payload size (6291556 bytes)."
 */
export const MAX_RESPONSE_PAYLOAD_BYTES = 6_291_556;

/** The deployed settings of a function (a FUNCTION_SETTINGS row). */
export interface FunctionSettings {
  memorySize: number;
  timeoutSeconds: number;
  reservedConcurrency?: number;
}

/** A function as deployed: its bundle and its settings. */
export interface FunctionConfiguration {
  /** file: URL of the bundle (dist/functions/<name>/index.mjs). */
  bundleUrl: string;
  settings: FunctionSettings;
}

export interface LocalLambdaOptions {
  /** Every function of the account, by name: reservations are taken from the account's concurrency. */
  functions: Record<string, FunctionConfiguration>;
  /** The account's concurrent executions quota (default ACCOUNT_CONCURRENT_EXECUTIONS, as AWS gives a new account). */
  concurrentExecutions?: number;
  /** Overrides ENVIRONMENT_IDLE_MS (tests). */
  idleMs?: number;
  /** Overrides INIT_LIMIT_MS (tests). */
  initLimitMs?: number;
}

/** Why Lambda refused an invocation (the `Reason` of Invoke's TooManyRequestsException). */
export type ThrottleReason = 'ReservedFunctionConcurrentInvocationLimitExceeded' | 'ConcurrentInvocationLimitExceeded';

/** Lambda refused the invocation (HTTP 429 TooManyRequestsException from Lambda's Invoke API): no concurrency was left for it. */
export class LambdaThrottledError extends Error {
  readonly reason: ThrottleReason;
  constructor(functionName: string, reason: ThrottleReason) {
    const pool = reason === 'ReservedFunctionConcurrentInvocationLimitExceeded' ? 'reserved' : "the account's unreserved";
    super(`Rate Exceeded. (${functionName}: ${pool} concurrency in use)`);
    this.name = 'TooManyRequestsException';
    this.reason = reason;
  }
}

/** The invocation ran and failed (FunctionError: Unhandled): the handler threw, timed out, answered too much, or its environment died. */
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

/**
 * The machine's Init slots: at most one environment initialises per core at a time, whatever its
 * function, in the order the invocations asked. `start` returns the Init it began (the slot is held
 * until it settles) or nothing when it no longer needs one.
 */
class InitSlots {
  private free = availableParallelism();
  private readonly waiting: (() => Promise<unknown> | undefined)[] = [];

  request(start: () => Promise<unknown> | undefined): void {
    this.waiting.push(start);
    this.grant();
  }

  private grant(): void {
    while (this.free > 0 && this.waiting.length > 0) {
      const init = (this.waiting.shift() as () => Promise<unknown> | undefined)();
      if (!init) continue;
      this.free--;
      void init
        .catch(() => undefined)
        .finally(() => {
          this.free++;
          this.grant();
        });
    }
  }
}

/** The machine's: shared by every LocalLambda of this process (the API's functions and any other stand-in's). */
const initSlots = new InitSlots();

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

class Environment {
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

/** One Lambda function of the local run and its execution environments. */
class LambdaFunction {
  readonly functionName: string;
  readonly configuration: FunctionConfiguration;
  /** Invocations under way, those waiting for an environment included: Lambda's concurrency of the function. */
  inFlight = 0;
  private readonly account: LocalLambda;
  /** Warm environments waiting for an invocation, the most recently used last. */
  private readonly idle: Environment[] = [];
  private readonly all = new Set<Environment>();
  /** Invocations waiting for an environment: the first of this function's to become free, or a new one. */
  private readonly waiting: ((environment: Environment) => void)[] = [];
  /** Environments retireEnvironments() ends once their invocation is over. */
  private readonly retired = new WeakSet<Environment>();

  constructor(functionName: string, configuration: FunctionConfiguration, account: LocalLambda) {
    this.functionName = functionName;
    this.configuration = configuration;
    this.account = account;
  }

  async invoke(event: unknown): Promise<unknown> {
    const { timeoutSeconds } = this.configuration.settings;
    let environment: Environment | undefined;
    try {
      environment = await this.environment(this.account.initLimitMs);
      try {
        await environment.ready;
      } catch (error) {
        // Init outlived its limit: retried within the invocation, the retried Init and the
        // invocation sharing the function's timeout.
        if (!(error instanceof LambdaFunctionError) || error.errorType !== 'Runtime.InitTimeout') throw error;
        environment = await this.environment(timeoutSeconds * 1000);
        await environment.ready;
        if (environment.invocations === 0)
          return await environment.invoke(event, timeoutSeconds, timeoutSeconds * 1000 - (Date.now() - environment.initStartedAt));
      }
      return await environment.invoke(event, timeoutSeconds);
    } finally {
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

  /** A warm environment, else the first to become free or a new one once an Init slot is free. */
  private environment(initLimitMs: number): Promise<Environment> {
    const warm = this.idle.pop();
    if (warm) {
      clearTimeout(warm.idleTimer);
      return Promise.resolve(warm);
    }
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      initSlots.request(() => {
        const index = this.waiting.indexOf(resolve);
        if (index < 0) return undefined; // an environment became free first
        this.waiting.splice(index, 1);
        const environment = this.start(initLimitMs);
        resolve(environment);
        return environment.ready;
      });
    });
  }

  private start(initLimitMs: number): Environment {
    const environment = new Environment(this.functionName, this.configuration, initLimitMs, (ended) => {
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
    const next = this.waiting.shift();
    if (next) {
      next(environment);
      return;
    }
    environment.idleTimer = setTimeout(() => environment.end(), this.account.idleMs);
    environment.idleTimer.unref();
    // The most recently used is taken first: the others age towards retirement, as a burst's extra environments do.
    this.idle.push(environment);
  }
}

/**
 * Lambda in one account and region of the local run: its functions and their concurrency
 * (reserved, or the account's unreserved pool). Their Inits share the machine's Init slots.
 */
export class LocalLambda {
  readonly idleMs: number;
  readonly initLimitMs: number;
  private readonly functions = new Map<string, LambdaFunction>();
  /** The account's concurrency less every reservation: what the functions without one share. */
  private readonly unreservedConcurrency: number;
  private unreservedInFlight = 0;

  constructor(options: LocalLambdaOptions) {
    this.idleMs = options.idleMs ?? ENVIRONMENT_IDLE_MS;
    this.initLimitMs = options.initLimitMs ?? INIT_LIMIT_MS;
    let reserved = 0;
    for (const [name, configuration] of Object.entries(options.functions)) {
      this.functions.set(name, new LambdaFunction(name, configuration, this));
      reserved += configuration.settings.reservedConcurrency ?? 0;
    }
    this.unreservedConcurrency = (options.concurrentExecutions ?? ACCOUNT_CONCURRENT_EXECUTIONS) - reserved;
  }

  /**
   * Invokes `functionName` synchronously (RequestResponse), as API Gateway does. Rejects with
   * LambdaThrottledError when no concurrency is left for it and with LambdaFunctionError when the
   * invocation fails.
   */
  async invoke<R>(functionName: string, event: unknown): Promise<R> {
    const fn = this.functions.get(functionName);
    if (!fn) throw new Error(`No function ${functionName} in the local Lambda`);
    const reserved = fn.configuration.settings.reservedConcurrency;
    if (reserved !== undefined && fn.inFlight >= reserved)
      throw new LambdaThrottledError(functionName, 'ReservedFunctionConcurrentInvocationLimitExceeded');
    if (reserved === undefined && this.unreservedInFlight >= this.unreservedConcurrency)
      throw new LambdaThrottledError(functionName, 'ConcurrentInvocationLimitExceeded');
    fn.inFlight++;
    if (reserved === undefined) this.unreservedInFlight++;
    try {
      return (await fn.invoke(event)) as R;
    } finally {
      fn.inFlight--;
      if (reserved === undefined) this.unreservedInFlight--;
    }
  }

  /** Retires `functionName`'s environments, so its next invocation loads the bundle afresh (--watch). */
  retireEnvironments(functionName: string): void {
    this.functions.get(functionName)?.retireEnvironments();
  }

  /** Ends every environment (the local API stops). */
  close(): void {
    for (const fn of this.functions.values()) fn.close();
  }
}
