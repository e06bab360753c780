// Starts `bin/local-api.ts` (what `npm start` runs) as a child process and waits for its URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { freePort } from '../../lib/local/dynamodb-local.ts';

export interface LocalApiProcess {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startLocalApiProcess(env: Record<string, string>, logFile: string): Promise<LocalApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local-api.ts'], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // its DynamoDB Local's watchdog then stops Java too
      reject(new Error(`The local API did not start in 180 s:\n${output}`));
    }, 180_000); // generous: a first start on a loaded machine has taken 35 s
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`The local API exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // A stop that hangs (a stopped Java) must not hold the test run: SIGKILL after 60 s, and
      // DynamoDB Local's watchdog then stops Java.
      const hung = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(hung);
    },
  };
}
