// `npm start`'s local run (bin/local-api.ts reads its command line): every setting checked before
// anything is created, then the start-up as named steps — what the run takes (its port, the data
// directory), its stores, the webhook pipeline, the first user, the gateway — each undone on stop,
// last first (run-lifecycle.ts).
import type { Server } from 'node:http';
import { ensureAdminUser } from './admin-user.ts';
import { deployedFunctions } from './deployed-functions.ts';
import { drain } from './http-server.ts';
import { LocalLambda } from './lambda-runtime.ts';
import { startLocalApiGateway, type LocalApiGateway } from './local-api-gateway.ts';
import { DATA_DIRECTORY, localTableNames, standInPorts, usesDataDirectory } from './local-environment.ts';
import { takeDataDirectory, takePorts } from './local-run-claims.ts';
import { accessLogWriter, announce } from './local-run-report.ts';
import { startStores } from './local-run-stores.ts';
import { directoryProblems, endpointProblem, settingProblems, unknownSettings } from './local-settings.ts';
import { RunLifecycle } from './run-lifecycle.ts';
import { inMemoryLimitBytes } from './size-watchdog.ts';
import { startLocalWebhookPipeline, type LocalWebhookPipeline } from './webhook-pipeline.ts';

export interface LocalRunOptions {
  /** Where the bundles are built and loaded from. */
  bundlesDirectory: string;
  /** --build: builds the bundles unless they are built from these very sources; true if it built. */
  buildBundles?: () => Promise<boolean>;
  /** --watch: rebuilds a function's bundle when its sources change (retiring its environments); returns what stops it. */
  watchSources?: (options: {
    bundlesDirectory: string;
    retire: (functionName: string) => void;
    say: (line: string) => void;
  }) => Promise<() => void>;
}

/** What the run reads of its settings once they are checked, before it adds its own to process.env. */
interface GivenSettings {
  /** The settings as given (the run adds its own to process.env for the handlers). */
  env: NodeJS.ProcessEnv;
  port: number;
  adminPassword: string | undefined;
  inMemoryLimit: number;
  /** Request logs as JSON lines rather than short human ones. */
  jsonLogs: boolean;
}

/** How long a stop lets requests under way finish (API Gateway's integration timeout is 29 s). */
const DRAIN_MS = 29_000;

/** Starts the local run: it answers until a signal or a failure stops it (the process then exits). */
export async function startLocalRun(options: LocalRunOptions): Promise<void> {
  const settings = await checkedSettings(options);
  const run = new RunLifecycle();
  run.stopOnSignals();
  try {
    await startUp(run, options, settings);
  } catch (error) {
    await run.fail(`The local API could not start: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Every setting, before anything is created: one line per refused value, exit code 1. */
async function checkedSettings(options: LocalRunOptions): Promise<GivenSettings> {
  const refused = [...unknownSettings(), ...settingProblems()];
  if (refused.length === 0) refused.push(...directoryProblems({ bundles: options.bundlesDirectory, build: Boolean(options.buildBundles) }));
  if (refused.length === 0 && process.env.DYNAMODB_ENDPOINT) {
    const unreachable = await endpointProblem(process.env.DYNAMODB_ENDPOINT);
    if (unreachable) refused.push(unreachable);
  }
  if (refused.length > 0) {
    for (const line of refused) console.error(line);
    process.exit(1);
  }
  // Request logs: one short human line per request on a terminal; JSON lines otherwise (a file, a
  // pipe, a process manager) or with MUSEUM_LOG_FORMAT=json.
  const jsonLogs = process.env.MUSEUM_LOG_FORMAT ? process.env.MUSEUM_LOG_FORMAT === 'json' : !process.stdout.isTTY;
  // On a terminal the handlers' own Powertools JSON lines (one per login, ~450 characters) would
  // drown the request lines: warnings and errors only, unless POWERTOOLS_LOG_LEVEL says otherwise.
  if (!jsonLogs) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  return {
    env: { ...process.env },
    adminPassword: process.env.MUSEUM_ADMIN_PASSWORD || undefined,
    inMemoryLimit: inMemoryLimitBytes(),
    port: Number(process.env.PORT || 3000),
    jsonLogs,
  };
}

async function startUp(run: RunLifecycle, options: LocalRunOptions, settings: GivenSettings): Promise<void> {
  const ports = standInPorts();
  const server = await takePorts(run, settings.port, ports);
  const lock = await takeDataDirectory(run);

  run.say('Starting the Museum Special Events API');
  const { buildBundles } = options;
  if (buildBundles) await run.step('bundles', buildBundles, (built) => (built ? 'built' : 'up to date (sources unchanged)'));
  const stores = await startStores(run, lock, { secretsManagerPort: ports.secretsManager, inMemoryLimit: settings.inMemoryLimit });
  // The webhook pipeline's stand-ins (SQS, KMS) before any function starts: the functions reach
  // them through the endpoint variables it adds to their environment (docs/WEBHOOKS.md).
  // One local Lambda for the run: the gateway's functions and the webhook pipeline's share the
  // account's concurrency, as they do in one AWS account.
  const lambda = new LocalLambda({ functions: deployedFunctions(options.bundlesDirectory) });
  const webhooks = await run.step(
    'webhooks',
    () =>
      startLocalWebhookPipeline({
        dynamodbEndpoint: stores.dynamodb.endpoint,
        tableName: localTableNames.events,
        lambda,
        ...(usesDataDirectory() ? { dataDirectory: DATA_DIRECTORY } : {}),
        ...(process.env.MUSEUM_WEBHOOK_RETRY_SCALE ? { retryScale: process.env.MUSEUM_WEBHOOK_RETRY_SCALE } : {}),
        ports,
        log: run.say,
      }),
    (pipeline) => `queues at ${pipeline.environment.AWS_ENDPOINT_URL_SQS} (SQS)`,
  );
  run.onStop(() => webhooks.close());
  Object.assign(process.env, webhooks.environment);
  const created = await run.step(
    'users',
    () => ensureAdminUser(stores.keysFile, settings.adminPassword, run.say),
    (user) => (user ? `created admin (editor)${user.generated ? ', password below' : ''}` : ''),
  );
  const gateway = await startGateway(run, server, lambda, webhooks, {
    bundlesDirectory: options.bundlesDirectory,
    jsonLogs: settings.jsonLogs,
  });
  if (options.watchSources) {
    const stopWatching = await options.watchSources({
      bundlesDirectory: options.bundlesDirectory,
      retire: (functionName) => gateway.retireEnvironments(functionName),
      say: run.say,
    });
    run.onStop(async () => stopWatching());
  }
  await lock?.update({ url: gateway.url });
  stores.record?.update({ url: gateway.url });
  webhooks.start();
  announce(run.say, {
    url: gateway.url,
    endpoint: stores.dynamodb.endpoint,
    started: Boolean(stores.dynamodb.started),
    created,
    givenSettings: settings.env,
  });
}

/** The gateway on the run's server; on stop it lets the requests and deliveries under way finish first. */
async function startGateway(
  run: RunLifecycle,
  server: Server,
  lambda: LocalLambda,
  webhooks: LocalWebhookPipeline,
  { bundlesDirectory, jsonLogs }: { bundlesDirectory: string; jsonLogs: boolean },
): Promise<LocalApiGateway> {
  const gateway = await run.step('listening', () =>
    startLocalApiGateway({
      server,
      functionsDirectory: bundlesDirectory,
      lambda,
      ...(process.env.AUTHORIZER_CACHE_TTL_SECONDS ? { authorizerCacheTtlSeconds: Number(process.env.AUTHORIZER_CACHE_TTL_SECONDS) } : {}),
      corsAllowedOrigins: (process.env.CORS_ALLOWED_ORIGINS ?? '')
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
      accessLog: accessLogWriter(jsonLogs, run.say),
    }),
  );
  // A stop first lets the requests under way finish and answer, then stops DynamoDB Local (which
  // stops cleanly, writing what it acknowledged): a write answered 2xx is never lost.
  run.onStop(async () => {
    // The webhook deliveries under way finish too (or go back to their queue) before the shared
    // Lambda's environments end: a stop strands no delivery (docs/WEBHOOKS.md, "Stopping").
    await Promise.all([drain(server, DRAIN_MS), webhooks.stopMappings()]);
    await gateway.close();
  });
  return gateway;
}
