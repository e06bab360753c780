// Runs a part of the benchmark in its own Node process: the process's stdout (function logs and
// metrics) goes to a log file, its stderr (progress) to ours, and its result comes back as JSON
// on file descriptor 3.
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

export interface ChildOptions {
  env: Record<string, string>;
  /** Where the child's stdout goes; discarded when absent. */
  logFile?: string;
  /** Forward the child's stderr to ours (progress lines); it is always kept for error messages. */
  forwardStderr?: boolean;
}

export async function runChild<T>(args: string[], options: ChildOptions): Promise<T> {
  const logFd = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  try {
    const child = spawn(process.execPath, args, {
      env: options.env,
      stdio: ['ignore', logFd, 'pipe', 'pipe'],
    });
    let stderr = '';
    let result = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8_000);
      if (options.forwardStderr) process.stderr.write(chunk);
    });
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (result += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0 || !result) throw new Error(`${args.join(' ')} exited with ${code}:\n${stderr}`);
    return JSON.parse(result) as T;
  } finally {
    if (typeof logFd === 'number') closeSync(logFd);
  }
}
