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
import { availableParallelism } from 'node:os';
import { LambdaFunctionError, LambdaThrottledError } from './lambda-errors.ts';
import { Environment } from './lambda-environment.ts';

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
