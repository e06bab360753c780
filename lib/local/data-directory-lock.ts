// One lock per data directory, so that two `npm start`s (or a start and the users CLI) never run
// two DynamoDB Locals on one database file. The lock file is created atomically (a complete file
// hard-linked into place: it exists with its content or not at all), names its holder by process
// id AND start time (a recycled pid is not mistaken for the holder), and records the holder's
// Java process so that a start after a crash can find and stop it. Breaking a stale lock happens
// under a short-lived takeover file, so two starts that both find it stale cannot both proceed.
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSameProcess, processCommand, processStart } from './process-liveness.ts';

export { processStart };

export const LOCK_FILE = 'local-api.lock';

export interface LockRecord {
  holder: 'npm start' | 'users CLI' | 'events CLI';
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

async function writeComplete(path: string, record: object): Promise<string> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return temporary;
}

/** The file's text, or undefined when it cannot be read (gone). */
async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** Removes `path` only if it still holds `text` (what was judged stale, or our own record). */
async function unlinkIfUnchanged(path: string, text: string): Promise<void> {
  if ((await readText(path)) === text) await unlink(path).catch(() => undefined);
}

/**
 * Runs `action` while holding the takeover file, which names its holder like the lock does. It is
 * broken only when that holder has exited (stopping a leftover Java may legitimately take a while).
 */
async function underTakeover<T>(dataDirectory: string, action: () => Promise<T>): Promise<T> {
  const takeover = join(dataDirectory, `${LOCK_FILE}.takeover`);
  const mine = { pid: process.pid, processStart: processStart(process.pid) ?? '' };
  const temporary = await writeComplete(takeover, mine);
  const myText = await readFile(temporary, 'utf8');
  try {
    for (;;) {
      try {
        await link(temporary, takeover);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const text = await readText(takeover);
      if (text === undefined) continue;
      const holder = parseRecord(text);
      if (holder && isSameProcess(holder.pid, holder.processStart)) await sleep(50);
      else await unlinkIfUnchanged(takeover, text);
    }
  } finally {
    await unlink(temporary);
  }
  try {
    return await action();
  } finally {
    await unlinkIfUnchanged(takeover, myText);
  }
}

function parseRecord(text: string): Pick<LockRecord, 'pid' | 'processStart'> | undefined {
  try {
    const record = JSON.parse(text) as Partial<LockRecord> | null;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- the lock record is parsed JSON: processStart may be any value at runtime
    return typeof record?.pid === 'number' ? { pid: record.pid, processStart: String(record.processStart ?? '') } : undefined;
  } catch {
    return undefined;
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
      const text = await readText(path);
      if (text === undefined) return;
      const current = parseRecord(text) && (JSON.parse(text) as LockRecord);
      if (current && isSameProcess(current.pid, current.processStart)) return;
      if (current) await stopLeftoverJava(current, dataDirectory, log);
      // Only the record judged stale: never a lock another start has taken meanwhile.
      await unlinkIfUnchanged(path, text);
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
        if (
          (
            await readFile(path, 'utf8').then(
              (text) => JSON.parse(text) as LockRecord,
              () => undefined,
            )
          )?.pid === process.pid
        ) {
          await unlink(path).catch(() => undefined);
        }
      },
    },
  };
}
