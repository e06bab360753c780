// Where a running `npm start` that does NOT use its data directory (MUSEUM_IN_MEMORY=1, or an
// external DYNAMODB_ENDPOINT) says so, for the users and events CLIs: they then act on that run's
// store (an in-memory run records its DynamoDB Local's key id for them), instead of writing into
// `.data/` while the API a person is using reads another store. (A start on the data directory
// is found through the directory's lock.) The records live outside the data
// directory, which an in-memory run must not create: one file per run, in a directory of the
// user's own under the temporary directory (mode 0700, checked to be ours and not a symlink).
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { isSameProcess, processStart } from './process-liveness.ts';

export interface RunRecord {
  pid: number;
  processStart: string;
  /** The data directory this run would have used (the one the users CLI would use beside it). */
  dataDirectory: string;
  /** Where its users actually live: `in memory` or a DynamoDB endpoint. */
  store: string;
  dynamodbEndpoint: string;
  /** The in-memory database's temporary directory, if any. */
  temporaryDirectory?: string;
  /** The in-memory DynamoDB Local's key id (the secret of its database): this file is the user's only, in a directory of theirs. */
  keyId?: string;
  /** Its credential keys (lib/local/credential-keys-file.ts): in the temporary directory for an in-memory run. */
  credentialKeysFile?: string;
  url?: string;
}

function registryDirectory(): string {
  const uid = process.getuid?.() ?? userInfo().username;
  const directory = join(tmpdir(), `museum-local-runs-${uid}`);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const stat = lstatSync(directory);
  if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid()) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${directory} is not a private directory of this user; remove it`);
  }
  return directory;
}

/** Records this process's run; the returned function removes the record (also done on exit). */
export function registerRun(record: Omit<RunRecord, 'pid' | 'processStart'>): { update(fields: Partial<RunRecord>): void; remove(): void } {
  const path = join(registryDirectory(), `${process.pid}.json`);
  const full: RunRecord = { pid: process.pid, processStart: processStart(process.pid) ?? '', ...record };
  const write = () => writeFileSync(path, `${JSON.stringify(full, null, 2)}\n`, { mode: 0o600 });
  const remove = () => {
    process.removeListener('exit', remove);
    rmSync(path, { force: true });
  };
  write();
  process.once('exit', remove);
  return {
    update: (fields) => {
      Object.assign(full, fields);
      write();
    },
    remove,
  };
}

/** The live runs recorded (stale records of dead processes are removed on the way). */
export function runningRuns(): RunRecord[] {
  let directory: string;
  try {
    directory = registryDirectory();
  } catch {
    return [];
  }
  const runs: RunRecord[] = [];
  for (const name of readdirSync(directory)) {
    if (!name.endsWith('.json')) continue;
    try {
      const record = JSON.parse(readFileSync(join(directory, name), 'utf8')) as RunRecord;
      if (isSameProcess(record.pid, record.processStart)) runs.push(record);
      else rmSync(join(directory, name), { force: true });
    } catch {
      // being written, or not ours: skipped
    }
  }
  return runs;
}

/** The other live runs for `dataDirectory` that keep their data elsewhere (in memory, or DYNAMODB_ENDPOINT). */
export function runsOnOtherStores(dataDirectory: string): RunRecord[] {
  return runningRuns().filter((record) => record.dataDirectory === dataDirectory && record.pid !== process.pid);
}
