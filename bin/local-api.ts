// `npm start`: the API on http://127.0.0.1:$PORT/v1.1, backed by DynamoDB Local. One Node process
// (npm's signals reach it: no shell chain) that checks every setting, takes the port, then the
// data directory's lock, builds the bundles (--build), starts DynamoDB Local, and stops all of it
// on SIGINT, SIGTERM, SIGHUP, when the process that started it (npm) is gone, or when DynamoDB
// Local itself exits.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../functions/store/dynamodb-client.ts';
import { generateCredential, hashCredential } from '../functions/auth/credentials.ts';
import { UsersStore } from '../functions/auth/users-store.ts';
import { lockDataDirectory, lockHolder, processStart, type DataDirectoryLock } from '../lib/local/data-directory-lock.ts';
import { ensureCredentialKeysFile, readCredentialKeysFile } from '../lib/local/credential-keys-file.ts';
import { KEY_FILE, killStartedJavaNow, localClient, localCredentials, portIsFree } from '../lib/local/dynamodb-local.ts';
import { ensureLocalTables } from '../lib/local/local-tables.ts';
import { listenOnLoopback, startLocalApiGateway, type AccessLogEntry } from '../lib/local/local-api-gateway.ts';
import { deployedFunctions } from '../lib/local/deployed-functions.ts';
import { LocalLambda } from '../lib/local/lambda-runtime.ts';
import {
  credentialKeysFile,
  DATA_DIRECTORY,
  DYNAMODB_DIRECTORY,
  dynamoDbLocalPort,
  handlerEnvironment,
  localDynamoDb,
  localTableNames,
  removeOldRuntimeFile,
  standInPorts,
  usesDataDirectory,
} from '../lib/local/local-environment.ts';
import { directoryProblems, endpointProblem, settingProblems, unknownSettings } from '../lib/local/local-settings.ts';
import { registerRun } from '../lib/local/run-registry.ts';
import { LOCAL_CREDENTIAL_KEYS_SECRET, startSecretsManagerStandIn } from '../lib/local/secrets-manager-stand-in.ts';
import { startLocalWebhookPipeline } from '../lib/local/webhook-pipeline.ts';
import { inMemoryLimitBytes, watchDirectorySize } from '../lib/local/size-watchdog.ts';

const USAGE = `Usage: npm start [-- options]      (node --import tsx bin/local-api.ts [options])

The Museum Special Events API on http://127.0.0.1:$PORT/v1.1: the Lambda bundles behind a local
API Gateway, backed by DynamoDB Local (data under .data/ unless --in-memory).

Options:
  --port <port>   port on 127.0.0.1 (the PORT setting; default 3000, 0: any free port)
  --in-memory     keep the data in a temporary directory, removed on stop (MUSEUM_IN_MEMORY=1)
  --watch         rebuild a function's bundle when its sources change: its next invocation
                  runs the new code, on the same port and data
  --no-build      load the bundles as they are (npm start builds them when their sources changed)
  --version       print the version and exit
  -h, --help      print this help and exit

Every other setting is an environment variable (README.md, Configuration). A bad, incomplete or
unknown MUSEUM_* setting is refused in one line, exit code 1, before anything is created; a bad
option in one line, exit code 2.`;

/** The command line: an unknown option or a stray argument is one line and exit code 2 (a usage error, as getopt's tools). */
function commandLine() {
  try {
    return parseArgs({
      options: {
        build: { type: 'boolean', default: false },
        port: { type: 'string' },
        'in-memory': { type: 'boolean' },
        watch: { type: 'boolean', default: false },
        version: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowNegative: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message.split('\n')[0]} (npm start -- --help lists the options)`);
    process.exit(2);
  }
}
const flags = commandLine();
if (flags.help) {
  console.log(USAGE);
  process.exit(0);
}
if (flags.version) {
  const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    name: string;
    version: string;
  };
  console.log(`${name} ${version}`);
  process.exit(0);
}
// An option stands for its setting, and is checked by the same rule.
if (flags.port !== undefined) process.env.PORT = flags.port;
if (flags['in-memory'] !== undefined) process.env.MUSEUM_IN_MEMORY = flags['in-memory'] ? '1' : '0';

/** Where the bundles are built and loaded from (MUSEUM_BUNDLES_DIR: the tests build elsewhere than dist/ that other runs use). */
const BUNDLES_DIRECTORY = process.env.MUSEUM_BUNDLES_DIR || 'dist/functions';

// Every setting, before anything is created: one line per refused value, exit code 1.
const settingsRefused = [...unknownSettings(), ...settingProblems()];
if (settingsRefused.length === 0) settingsRefused.push(...directoryProblems({ bundles: BUNDLES_DIRECTORY, build: flags.build }));
if (settingsRefused.length === 0 && process.env.DYNAMODB_ENDPOINT) {
  const unreachable = await endpointProblem(process.env.DYNAMODB_ENDPOINT);
  if (unreachable) settingsRefused.push(unreachable);
}
if (settingsRefused.length > 0) {
  for (const line of settingsRefused) console.error(line);
  process.exit(1);
}

// Request logs: one short human line per request on a terminal; JSON lines otherwise (a file, a
// pipe, a process manager) or with MUSEUM_LOG_FORMAT=json.
const jsonLogs = process.env.MUSEUM_LOG_FORMAT ? process.env.MUSEUM_LOG_FORMAT === 'json' : !process.stdout.isTTY;
// On a terminal the handlers' own Powertools JSON lines (one per login, ~450 characters) would
// drown the request lines: warnings and errors only, unless POWERTOOLS_LOG_LEVEL says otherwise.
if (!jsonLogs) process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

/** Lines printed so far: a step's "…" line is rewritten in place on a terminal only if it is still the last. */
let linesPrinted = 0;
const say = (line: string) => {
  linesPrinted++;
  console.log(line);
};
/** What to undo on stop, last started first. */
const cleanups: (() => Promise<void>)[] = [];
let stopping: Promise<void> | undefined;
/** The start-up step under way: a stop waits for it, so that what it starts is stopped too. */
let currentStep: Promise<unknown> | undefined;
/** Aborts the slow step (DynamoDB Local's start), so that a stop during start-up is quick. */
const startUp = new AbortController();

/** A one-line error and exit code 1, after stopping whatever has started. */
async function fail(message: string): Promise<never> {
  console.error(message);
  await stopEverything();
  process.exit(1);
}

/** The settings as given (the run adds its own to process.env for the handlers). */
const givenSettings = { ...process.env };
const adminPassword = process.env.MUSEUM_ADMIN_PASSWORD || undefined;
const inMemoryLimit = inMemoryLimitBytes();
const port = Number(process.env.PORT || 3000);
/** How long a stop lets requests under way finish (API Gateway's integration timeout is 29 s). */
const DRAIN_MS = 29_000;

function stopEverything(): Promise<void> {
  return (stopping ??= (async () => {
    startUp.abort();
    await currentStep?.catch(() => undefined);
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error: unknown) => console.error(error instanceof Error ? error.message : error));
  })());
}

async function stop(reason: string) {
  if (stopping) return;
  say(`${reason}: stopping`);
  await stopEverything();
  process.exit(0);
}
/**
 * Signals this close to the first are the same request to stop: a terminal's Ctrl-C reaches npm
 * and this process together (the whole foreground process group), and npm then forwards its own
 * copy. Only a signal after this window means "the stop hangs: exit now".
 */
const SAME_STOP_WINDOW_MS = 3_000;
let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (!stopping) {
      firstSignalAt = performance.now();
      return void stop(signal);
    }
    if (performance.now() - firstSignalAt < SAME_STOP_WINDOW_MS) return;
    // A later signal: exit now. The lock and the run's record go with the exit handlers; Java is
    // killed and an in-memory database removed here.
    say(`${signal} again: exiting at once`);
    killStartedJavaNow();
    process.exit(1);
  });
}
// npm forwards only SIGINT and SIGTERM; when npm itself dies (SIGHUP, kill -9) this process is
// re-parented. Nothing of a local run should outlive what started it.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) void stop('the process that started this one has exited');
}, 500).unref();

/** Once a stop has begun, start-up goes no further (the stop exits the process). */
async function unlessStopping(): Promise<void> {
  if (stopping) await new Promise<never>(() => undefined);
}

/** Runs one start-up step and prints it with its duration; none runs, or is printed, once a stop has begun. */
async function step<T>(name: string, action: () => Promise<T>, note: (result: T) => string = () => ''): Promise<T> {
  await unlessStopping();
  const started = performance.now();
  say(`  ${name.padEnd(15)}   …`);
  const beganAt = linesPrinted;
  currentStep = action();
  let result: T;
  try {
    result = (await currentStep) as T;
  } catch (error) {
    await unlessStopping(); // failed because the stop aborted it: not a start-up error
    throw error;
  } finally {
    currentStep = undefined;
  }
  await unlessStopping();
  const extra = note(result);
  // On a terminal the "…" line becomes the result line when nothing was printed in between.
  if (process.stdout.isTTY && linesPrinted === beganAt) process.stdout.write('\x1b[1A\x1b[2K');
  say(`  ${name.padEnd(15)} ${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s${extra ? `   ${extra}` : ''}`);
  return result;
}

try {
  // The ports before anything is created or started: a busy port is one line and exit code 1,
  // with no data directory made and nothing left running.
  let server: Server;
  try {
    server = await listenOnLoopback(port);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const holder = usesDataDirectory() ? lockHolder(DATA_DIRECTORY) : undefined;
    await fail(
      code !== 'EADDRINUSE'
        ? `Cannot listen on 127.0.0.1:${port} (${code ?? (error as Error).message})`
        : holder?.holder === 'npm start'
          ? `The local API is already running on ${DATA_DIRECTORY} (pid ${holder.pid}${holder.url ? `, ${holder.url}` : ''}); stop it first, or use another MUSEUM_DATA_DIR.`
          : `Port ${port} on 127.0.0.1 is already in use; stop what uses it or choose another: PORT=${port + 1} npm start`,
    );
    throw error;
  }
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  // Once a stop has begun, every answer closes its connection: a client's keep-alive connection
  // cannot keep the drain below waiting.
  server.prependListener('request', (_request, response) => {
    if (stopping) response.setHeader('Connection', 'close');
  });
  const dynamodbPort = dynamoDbLocalPort();
  if (dynamodbPort && !(await portIsFree(dynamodbPort))) {
    await fail(`MUSEUM_DYNAMODB_PORT ${dynamodbPort} is already in use; stop what uses it or choose another port for DynamoDB Local.`);
  }
  const ports = standInPorts();
  for (const [variable, port] of [
    ['MUSEUM_SQS_PORT', ports.sqs],
    ['MUSEUM_KMS_PORT', ports.kms],
    ['MUSEUM_SECRETS_MANAGER_PORT', ports.secretsManager],
  ] as const)
    if (port && !(await portIsFree(port))) await fail(`${variable} ${port} is already in use; stop what uses it or choose another port.`);
  await unlessStopping();

  let lock: DataDirectoryLock | undefined;
  if (usesDataDirectory()) {
    const taken = await lockDataDirectory(DATA_DIRECTORY, 'npm start');
    if ('heldBy' in taken) {
      const { holder, pid, url } = taken.heldBy;
      await fail(
        holder === 'npm start'
          ? `The local API is already running on ${DATA_DIRECTORY} (pid ${pid}${url ? `, ${url}` : ''}); stop it first, or use another MUSEUM_DATA_DIR.`
          : `The users CLI (pid ${pid}) is using ${DATA_DIRECTORY}; start again when it has finished.`,
      );
    }
    lock = (taken as { lock: DataDirectoryLock }).lock;
    cleanups.push(() => lock?.release() ?? Promise.resolve());
    await removeOldRuntimeFile();
  }
  await unlessStopping();

  say('Starting the Museum Special Events API');
  if (flags.build) await step('bundles', buildUnlessUpToDate, (built) => (built ? 'built' : 'up to date (sources unchanged)'));
  const dynamodb = await step(
    'DynamoDB Local',
    async () => {
      const started = await localDynamoDb(startUp.signal);
      if (started.started) {
        cleanups.push(started.started.stop);
        // Without DynamoDB Local every request would fail: say why, once, and stop.
        started.started.onUnexpectedExit(
          (cause) => void fail(`${cause}: stopping, since the API cannot answer without it. Start it again with npm start.`),
        );
      }
      return started;
    },
    (started) => (started.started ? `port ${new URL(started.endpoint).port}` : `at ${started.endpoint}`),
  );
  if (dynamodb.started)
    await lock?.update({
      dynamodbEndpoint: dynamodb.endpoint,
      javaPid: dynamodb.started.javaPid,
      javaStart: processStart(dynamodb.started.javaPid),
    });
  // The credential keys (created at first start), served to the functions as Secrets Manager would.
  const keysFile = credentialKeysFile(dynamodb.started && !lock ? dynamodb.started.dataDirectory : undefined);
  await ensureCredentialKeysFile(keysFile);
  const secretsManager = await startSecretsManagerStandIn({
    secrets: { [LOCAL_CREDENTIAL_KEYS_SECRET]: keysFile },
    accessKeyId: localCredentials(dynamodb.endpoint).accessKeyId,
    port: ports.secretsManager,
  });
  cleanups.push(() => secretsManager.close());
  // A store other than the data directory: recorded, so that the users CLI does not write into
  // .data/ unseen by this run.
  const run = lock
    ? undefined
    : registerRun({
        dataDirectory: DATA_DIRECTORY,
        store: dynamodb.started ? 'in memory' : dynamodb.endpoint,
        dynamodbEndpoint: dynamodb.endpoint,
        temporaryDirectory: dynamodb.started?.dataDirectory,
        keyId: dynamodb.started?.keyId,
        credentialKeysFile: keysFile,
      });
  if (run) cleanups.push(async () => run.remove());
  if (dynamodb.started && !lock) {
    const directory = dynamodb.started.dataDirectory;
    const stopWatching = watchDirectorySize(
      directory,
      inMemoryLimit,
      (bytes) =>
        void fail(
          `The in-memory database directory ${directory} holds ${Math.round(bytes / 1024 / 1024)} MB, over the bound of ` +
            `${Math.round(inMemoryLimit / 1024 / 1024)} MB (MUSEUM_IN_MEMORY_MAX_MB): stopping, so that it cannot fill the machine's memory. ` +
            'DynamoDB Local accepts any client on the network, which can write databases of its own there.',
        ),
    );
    cleanups.push(async () => stopWatching());
  }
  Object.assign(process.env, handlerEnvironment(dynamodb.endpoint, secretsManager.endpoint));
  await step('tables', () => ensureLocalTables(dynamodb.endpoint, localTableNames));
  // The webhook pipeline's stand-ins (SQS, KMS) before any function starts: the functions reach
  // them through the endpoint variables it adds to their environment (docs/WEBHOOKS.md).
  // One local Lambda for the run: the gateway's functions and the webhook pipeline's share the
  // account's concurrency, as they do in one AWS account.
  const lambda = new LocalLambda({ functions: deployedFunctions(BUNDLES_DIRECTORY) });
  const webhooks = await step(
    'webhooks',
    () =>
      startLocalWebhookPipeline({
        dynamodbEndpoint: dynamodb.endpoint,
        tableName: localTableNames.events,
        lambda,
        ...(usesDataDirectory() ? { dataDirectory: DATA_DIRECTORY } : {}),
        ...(process.env.MUSEUM_WEBHOOK_RETRY_SCALE ? { retryScale: process.env.MUSEUM_WEBHOOK_RETRY_SCALE } : {}),
        ports,
        log: say,
      }),
    (pipeline) => `queues at ${pipeline.environment.AWS_ENDPOINT_URL_SQS} (SQS)`,
  );
  cleanups.push(() => webhooks.close());
  Object.assign(process.env, webhooks.environment);
  const created = await step(
    'users',
    () => ensureAdminUser(keysFile),
    (user) => (user ? `created admin (editor)${user.generated ? ', password below' : ''}` : ''),
  );

  const gateway = await step('listening', () =>
    startLocalApiGateway({
      server,
      functionsDirectory: BUNDLES_DIRECTORY,
      lambda,
      ...(process.env.AUTHORIZER_CACHE_TTL_SECONDS ? { authorizerCacheTtlSeconds: Number(process.env.AUTHORIZER_CACHE_TTL_SECONDS) } : {}),
      corsAllowedOrigins: (process.env.CORS_ALLOWED_ORIGINS ?? '')
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
      accessLog: jsonLogs
        ? (entry) => say(JSON.stringify({ time: new Date().toISOString(), ...entry }))
        : (entry) => say(requestLine(entry)),
    }),
  );
  // A stop first lets the requests under way finish and answer, then stops DynamoDB Local (which
  // stops cleanly, writing what it acknowledged): a write answered 2xx is never lost.
  cleanups.push(async () => {
    // The webhook deliveries under way finish too (or go back to their queue) before the shared
    // Lambda's environments end: a stop strands no delivery (docs/WEBHOOKS.md, "Stopping").
    await Promise.all([drain(server, DRAIN_MS), webhooks.stopMappings()]);
    await gateway.close();
  });
  if (flags.watch) {
    const { watchSources } = await import('../scripts/bundle-watch.ts');
    const stopWatching = await watchSources({
      bundlesDirectory: BUNDLES_DIRECTORY,
      retire: (functionName) => gateway.retireEnvironments(functionName),
      say,
    });
    cleanups.push(async () => stopWatching());
  }
  await lock?.update({ url: gateway.url });
  run?.update({ url: gateway.url });
  webhooks.start();

  if (created) {
    say(
      created.generated
        ? `Created user admin (editor) with password: ${created.password}\n(shown only this once; change it with: ${passwordCommand(dynamodb.endpoint, Boolean(dynamodb.started))})`
        : 'Created user admin (editor) with the password in MUSEUM_ADMIN_PASSWORD.',
    );
  }
  say(`Museum Special Events API listening on ${gateway.url}`);
  say(`  docs  ${gateway.url}/docs`);
  say(`  data  ${dataDescription(dynamodb.endpoint, Boolean(dynamodb.started))}`);
  say(process.stdout.isTTY ? 'Ctrl-C stops it.' : 'SIGINT or SIGTERM stops it.');
} catch (error) {
  await fail(`The local API could not start: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * Stops accepting connections and waits, at most `limitMs`, until the requests under way have
 * been answered (idle keep-alive connections are closed as they become idle).
 */
async function drain(server: Server, limitMs: number): Promise<void> {
  const closed = new Promise<'closed'>((resolve) => server.close(() => resolve('closed')));
  for (const deadline = performance.now() + limitMs; performance.now() < deadline;) {
    server.closeIdleConnections();
    if ((await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 50))])) === 'closed') return;
  }
}

/** Builds the bundles unless scripts/build.ts finds them built from these very inputs; true if it built. */
async function buildUnlessUpToDate(): Promise<boolean> {
  const { buildIfStale } = await import('../scripts/build.ts');
  return (await buildIfStale({ outdir: BUNDLES_DIRECTORY })) === 'built';
}

/** The users CLI command that reaches this run's users (it finds a run on the data directory or in memory by its MUSEUM_DATA_DIR). */
function passwordCommand(endpoint: string, started: boolean): string {
  // MUSEUM_DATA_DIR names the run (in memory) or, on DYNAMODB_ENDPOINT, where the credential key is.
  const same = (started ? ['MUSEUM_DATA_DIR', 'TABLE_NAME'] : ['MUSEUM_DYNAMODB_KEY_ID', 'TABLE_NAME', 'MUSEUM_DATA_DIR']).filter(
    (name) => givenSettings[name],
  );
  return `${started ? '' : `DYNAMODB_ENDPOINT=${endpoint} `}npm run -s users -- passwd admin${same.length > 0 ? `, with the same ${same.join(' and ')}` : ''}`;
}

function dataDescription(endpoint: string, started: boolean): string {
  if (!started) return `DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)`;
  if (!usesDataDirectory()) return 'in memory (MUSEUM_IN_MEMORY=1): gone when this stops';
  const shown = relative(process.cwd(), DATA_DIRECTORY) || '.';
  return `${shown.startsWith('..') ? DATA_DIRECTORY : shown}/ (DynamoDB Local answers only its key: ${relative(DATA_DIRECTORY, DYNAMODB_DIRECTORY)}/${KEY_FILE})`;
}

/** `12:00:01 GET /v1.1/special-events 200 14 ms admin`: what a person watching wants. */
function requestLine(entry: AccessLogEntry): string {
  const time = new Date().toTimeString().slice(0, 8);
  return `${time} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs} ms${entry.user ? ` ${entry.user}` : ''}`;
}

/**
 * On first start, user `admin` (editor) with MUSEUM_ADMIN_PASSWORD (at least 20 characters, checked
 * with the settings) or a generated one (192 random bits) printed once.
 */
async function ensureAdminUser(keysFile: string): Promise<{ password: string; generated: boolean } | undefined> {
  const client = localClient(process.env.AWS_ENDPOINT_URL_DYNAMODB ?? '');
  try {
    const users = new UsersStore(createDocumentClient(client), localTableNames.events);
    const existing = await users.listUsers();
    const older = existing.filter((user) => user.keyId === undefined).length;
    // Stored by a release that hashed with scrypt: they cannot log in until re-issued.
    if (older > 0)
      say(
        `  ${older} user(s) stored by an older release cannot log in: run npm run users -- migrate (docs/DEPLOY.md, "Migrating users stored with scrypt")`,
      );
    if (existing.some((user) => user.username === 'admin')) return undefined;
    const password = adminPassword ?? generateCredential();
    const passwordHash = hashCredential(password, await readCredentialKeysFile(keysFile));
    await users.putUser({ username: 'admin', role: 'editor', passwordHash }, 'create');
    return { password, generated: !adminPassword };
  } finally {
    client.destroy();
  }
}
