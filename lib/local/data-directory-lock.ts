// One lock per data directory, so that two `npm start`s (or a start and the users CLI) never run
// two DynamoDB Locals on one database file. The lock file is created atomically (a complete file
// hard-linked into place: it exists with its content or not at all), names its holder by process
// id AND start time (a recycled pid is not mistaken for the holder), and records the holder's
// Java process so that a start after a crash can find and stop it. Breaking a stale lock happens
// under a short-lived takeover file, so two starts that both find it stale cannot both proceed.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSameProcess, processCommand, processStart } from './process-liveness.ts';

export { processStart };

export const LOCK_FILE = 'local-api.lock';

export interface LockRecord {
  holder: 'npm start' | 'users CLI';
  pid: number;
  /** processStart(pid): tells the holder from a later process that got the same pid. */
  processStart: string;
  url?: string;
  dynamodbEndpoint?: string;
  javaPid?: number;
  javaStart?: string;
}

export interface DataDirectoryLock {
  record: LockRecord;
  /** Adds to the record (Java's pid, the URLs) as the start goes on. */
  update(fields: Partial<LockRecord>): Promise<void>;
  release(): Promise<void>;
}

export function readLock(dataDirectory: string): LockRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDirectory, LOCK_FILE), 'utf8')) as LockRecord;
  } catch {
    return undefined;
  }
}

/** The running holder of the lock, if any. */
export function lockHolder(dataDirectory: string): LockRecord | undefined {
  const record = readLock(dataDirectory);
  return record && isSameProcess(record.pid, record.processStart) ? record : undefined;
}

/** Stops the DynamoDB Local a dead holder left behind, having checked it is that Java on this data directory. */
async function stopLeftoverJava(record: LockRecord, dataDirectory: string, log: (line: string) => void): Promise<void> {
  const { javaPid, javaStart } = record;
  if (!javaPid || !isSameProcess(javaPid, javaStart)) return;
  const command = processCommand(javaPid);
  if (!command.includes('DynamoDBLocal') || !command.includes(dataDirectory)) return;
  log(`Stopping DynamoDB Local (pid ${javaPid}) left running by a previous start that did not stop cleanly`);
  process.kill(javaPid, 'SIGTERM');
  for (let waited = 0; isSameProcess(javaPid, javaStart); waited += 100) {
    if (waited === 5_000) process.kill(javaPid, 'SIGKILL');
    await sleep(100);
  }
}

async function writeComplete(path: string, record: LockRecord): Promise<string> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return temporary;
}

/** Runs `action` while holding the takeover file; one left by a crash (older than 10 s) is removed. */
async function underTakeover<T>(dataDirectory: string, action: () => Promise<T>): Promise<T> {
  const takeover = join(dataDirectory, `${LOCK_FILE}.takeover`);
  for (;;) {
    try {
      await writeFile(takeover, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(takeover).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > 10_000) await unlink(takeover).catch(() => undefined);
      else await sleep(50);
    }
  }
  try {
    return await action();
  } finally {
    await unlink(takeover).catch(() => undefined);
  }
}

/**
 * Takes the data directory's lock, or returns the live record of whoever holds it. A stale lock
 * (its holder is gone) is broken, and the Java it recorded stopped, first.
 */
export async function lockDataDirectory(
  dataDirectory: string,
  holder: LockRecord['holder'],
  log: (line: string) => void = (line) => console.log(line),
): Promise<{ lock: DataDirectoryLock } | { heldBy: LockRecord }> {
  await mkdir(dataDirectory, { recursive: true, mode: 0o700 });
  const path = join(dataDirectory, LOCK_FILE);
  const record: LockRecord = { holder, pid: process.pid, processStart: processStart(process.pid) ?? '' };
  for (let attempt = 0; ; attempt++) {
    if (attempt === 20) throw new Error(`Cannot take the lock ${path}; remove it if no start is running`);
    const temporary = await writeComplete(path, record);
    try {
      await link(temporary, path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(temporary);
    }
    const found = readLock(dataDirectory);
    if (found && isSameProcess(found.pid, found.processStart)) return { heldBy: found };
    await underTakeover(dataDirectory, async () => {
      // Checked again under the takeover: another start may have broken it and taken the lock
      // meanwhile (a new lock can only appear once the stale one is gone, and only this holder
      // of the takeover removes locks). A lock that cannot be read is stale too.
      if (!existsSync(path)) return;
      const current = readLock(dataDirectory);
      if (current && isSameProcess(current.pid, current.processStart)) return;
      if (current) await stopLeftoverJava(current, dataDirectory, log);
      await unlink(path).catch(() => undefined);
    });
  }

  let released = false;
  // A last resort for exits that skip release() (process.exit in an error path): the lock is ours.
  const releaseOnExit = () => {
    if (!released && readLock(dataDirectory)?.pid === process.pid) unlinkSync(path);
  };
  process.once('exit', releaseOnExit);
  return {
    lock: {
      record,
      update: async (fields) => {
        Object.assign(record, fields);
        await rename(await writeComplete(path, record), path);
      },
      release: async () => {
        if (released) return;
        released = true;
        process.removeListener('exit', releaseOnExit);
        if ((await readFile(path, 'utf8').then((text) => JSON.parse(text) as LockRecord, () => undefined))?.pid === process.pid) {
          await unlink(path).catch(() => undefined);
        }
      },
    },
  };
}
