// What a local run takes before it creates or starts anything, so that a busy port or a data
// directory in use is one line and exit code 1, with no data directory made and nothing left
// running: the API's port on 127.0.0.1 (held from here on), the ports set for DynamoDB Local and
// the stand-ins (checked free), then the data directory's lock.
import type { Server } from 'node:http';
import { lockDataDirectory, lockHolder, type DataDirectoryLock } from './data-directory-lock.ts';
import { portIsFree } from './dynamodb-local.ts';
import { listenOnLoopback } from './http-server.ts';
import { DATA_DIRECTORY, dynamoDbLocalPort, removeOldRuntimeFile, usesDataDirectory, type standInPorts } from './local-environment.ts';
import type { RunLifecycle } from './run-lifecycle.ts';

const alreadyRunning = (pid: number, url: string | undefined) =>
  `The local API is already running on ${DATA_DIRECTORY} (pid ${pid}${url ? `, ${url}` : ''}); stop it first, or use another MUSEUM_DATA_DIR.`;

/** Listens on `port` (answering 503 until the gateway serves) and checks the other set ports are free. */
export async function takePorts(run: RunLifecycle, port: number, ports: ReturnType<typeof standInPorts>): Promise<Server> {
  let server: Server;
  try {
    server = await listenOnLoopback(port);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const holder = usesDataDirectory() ? lockHolder(DATA_DIRECTORY) : undefined;
    await run.fail(
      code !== 'EADDRINUSE'
        ? `Cannot listen on 127.0.0.1:${port} (${code ?? (error as Error).message})`
        : holder?.holder === 'npm start'
          ? alreadyRunning(holder.pid, holder.url)
          : `Port ${port} on 127.0.0.1 is already in use; stop what uses it or choose another: PORT=${port + 1} npm start`,
    );
    throw error;
  }
  run.onStop(() => new Promise<void>((resolve) => server.close(() => resolve())));
  // Once a stop has begun, every answer closes its connection: a client's keep-alive connection
  // cannot keep the drain on stop (local-run.ts) waiting.
  server.prependListener('request', (_request, response) => {
    if (run.stopping) response.setHeader('Connection', 'close');
  });
  const dynamodbPort = dynamoDbLocalPort();
  if (dynamodbPort && !(await portIsFree(dynamodbPort))) {
    await run.fail(`MUSEUM_DYNAMODB_PORT ${dynamodbPort} is already in use; stop what uses it or choose another port for DynamoDB Local.`);
  }
  for (const [variable, port] of [
    ['MUSEUM_SQS_PORT', ports.sqs],
    ['MUSEUM_KMS_PORT', ports.kms],
    ['MUSEUM_SECRETS_MANAGER_PORT', ports.secretsManager],
  ] as const)
    if (port && !(await portIsFree(port)))
      await run.fail(`${variable} ${port} is already in use; stop what uses it or choose another port.`);
  await run.unlessStopping();
  return server;
}

/** The data directory's lock, taken for the run's whole life; none for a run in memory or on DYNAMODB_ENDPOINT. */
export async function takeDataDirectory(run: RunLifecycle): Promise<DataDirectoryLock | undefined> {
  let lock: DataDirectoryLock | undefined;
  if (usesDataDirectory()) {
    const taken = await lockDataDirectory(DATA_DIRECTORY, 'npm start');
    if ('heldBy' in taken) {
      const { holder, pid, url } = taken.heldBy;
      await run.fail(
        holder === 'npm start'
          ? alreadyRunning(pid, url)
          : `The users CLI (pid ${pid}) is using ${DATA_DIRECTORY}; start again when it has finished.`,
      );
    }
    lock = (taken as { lock: DataDirectoryLock }).lock;
    run.onStop(() => lock?.release() ?? Promise.resolve());
    await removeOldRuntimeFile();
  }
  await run.unlessStopping();
  return lock;
}
