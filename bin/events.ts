// `npm run events -- export --output events.jsonl` and `npm run events -- import --input
// events.jsonl`: move events between stages, accounts or a backup of the museum's own (format and
// guarantees: lib/cli/events-transfer.ts). Target: the local store, as for the users CLI (the running
// `npm start`, or the data directory), or a deployed events table with `--table <name>` (AWS
// credentials and region from the usual AWS_* settings, or --region).
// Files, not redirections, because `npm run` prints its own lines on stdout before the script
// runs: `npm run events -- export > events.jsonl` would start the file with them. The export is
// written to a temporary file beside the target and renamed when complete, so a failed export
// never leaves half a file under the name. Progress goes to stderr, only when it is a terminal.
import { once } from 'node:events';
import { createReadStream, createWriteStream, type ReadStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../functions/store/dynamodb-client.ts';
import { EventArchive } from '../functions/store/event-archive.ts';
import { exportEvents, importEvents, InvalidImportError, type Progress } from '../lib/cli/events-transfer.ts';
import { openStore, storeSettingsProblem, type Store } from '../lib/cli/operator-store.ts';

const USAGE = `Usage: npm run events -- export --output <file> | import --input <file> [options]
  export --output <file>   write every event to <file>, one JSON object per line (JSON Lines)
  import --input <file>    read such a file; every line is checked before anything is written
Without --output or --input the events go to stdout or come from stdin; run it then as
npm run -s events -- ..., since npm prints its own lines on stdout.
Options:
  --table <name>    a deployed events table (the stack output TableName); default: the local run
  --region <name>   AWS region for --table (default: AWS_REGION)`;

interface Arguments {
  command: 'export' | 'import';
  /** Absolute path of --output or --input, if given. */
  file?: string;
  table?: string;
  region?: string;
}

/** True when `npm run` (not silenced with -s) has already written its banner to our stdout. */
function npmWroteToStdout(): boolean {
  return process.env.npm_lifecycle_event === 'events' && process.env.npm_config_loglevel !== 'silent';
}

function parseArguments(): Arguments | number {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        output: { type: 'string' },
        input: { type: 'string' },
        table: { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const refuse = (message: string) => {
    console.error(`${message}\n${USAGE}`);
    return 2;
  };
  const [command, ...extra] = positionals;
  if ((command !== 'export' && command !== 'import') || extra.length > 0) {
    return refuse(command ? `Unknown arguments: ${positionals.join(' ')}.` : 'A command is required: export or import.');
  }
  if (values.region !== undefined && values.table === undefined) return refuse('--region applies with --table only.');
  if (command === 'export' && values.input !== undefined) return refuse('--input applies to import; export writes with --output <file>.');
  if (command === 'import' && values.output !== undefined) return refuse('--output applies to export; import reads with --input <file>.');
  const given = command === 'export' ? values.output : values.input;
  if (given === '') return refuse(`--${command === 'export' ? 'output' : 'input'} needs a file name.`);
  if (command === 'export' && given === undefined && !process.stdout.isTTY && npmWroteToStdout()) {
    // The shell has already opened the target: say so, since it now holds npm's lines only.
    return refuse(
      'npm has written its own lines to stdout, so a redirected export would not be valid JSON Lines: use --output events.jsonl (or npm run -s events -- export > events.jsonl).',
    );
  }
  if (command === 'import' && given === undefined && process.stdin.isTTY)
    return refuse('import reads a file: npm run events -- import --input events.jsonl');
  const settingsProblem = values.table === undefined ? storeSettingsProblem() : undefined;
  if (settingsProblem) {
    console.error(settingsProblem);
    return 2;
  }
  // npm runs scripts in the package's directory; a relative name means where the person typed it.
  const file = given === undefined ? undefined : resolve(process.env.INIT_CWD ?? process.cwd(), given);
  return { command, file, table: values.table, region: values.region };
}

/** Rewrites one status line on a terminal; silent when stderr is a file or a pipe. */
function terminalProgress(): Progress & { finish(): void } {
  const shown = process.stderr.isTTY;
  let last = 0;
  const progress = (message: string) => {
    if (!shown) return;
    const now = Date.now();
    if (now - last < 200) return;
    last = now;
    process.stderr.write(`\r\u001b[K${message}`);
  };
  return Object.assign(progress, { finish: () => shown && process.stderr.write('\r\u001b[K') });
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/**
 * What the export is, said with its summary: a snapshot only when nothing else could write. A
 * Scan's strongly consistent pages are each current when read, not one moment across pages; on
 * AWS the point-in-time paths are a PITR restore into a new table (then exported with this CLI)
 * or ExportTableToPointInTime to S3:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ExportTableToPointInTime.html
 */
function snapshotNote(store: Store): string {
  if (store.exclusive) return 'It is a consistent snapshot: nothing else could write while it ran (the CLI held the data directory).';
  return (
    'It is not a point-in-time snapshot: the table was read page by page while it could change, so an event changed meanwhile may appear ' +
    (store.target === 'deployed'
      ? 'before or after the change (for a point-in-time copy on AWS, restore the table to a point in time and export that: docs/DEPLOY.md, Restore).'
      : `before or after the change (for a consistent one, ${store.note ? 'export while no client writes' : 'stop npm start first'}).`)
  );
}

/** Resolves with undefined once `stream`'s file is open, or with the reason it cannot be. */
function opened(stream: ReadStream | WriteStream): Promise<string | undefined> {
  return once(stream, 'open').then(
    () => undefined,
    (error: unknown) => (error as Error).message,
  );
}

/** The export's file, written beside `file` and renamed onto it only when complete. */
interface ExportFile {
  stream: WriteStream;
  complete(): Promise<void>;
  discard(): Promise<void>;
}

async function openExportFile(file: string): Promise<ExportFile | string> {
  const partial = `${file}.partial-${process.pid}`;
  const stream = createWriteStream(partial, { flags: 'wx' });
  const problem = await opened(stream);
  if (problem) return `Cannot write ${file}: ${problem}`;
  return {
    stream,
    complete: async () => {
      stream.end();
      await finished(stream);
      await rename(partial, file);
    },
    discard: async () => {
      stream.destroy();
      await rm(partial, { force: true });
    },
  };
}

async function exportTo(archive: EventArchive, output: ExportFile | undefined, progress: Progress): Promise<number> {
  if (!output) return exportEvents(archive, process.stdout, progress);
  const count = await exportEvents(archive, output.stream, progress);
  await output.complete();
  return count;
}

async function main(): Promise<number> {
  const parsed = parseArguments();
  if (typeof parsed === 'number') return parsed;
  const { command, file, table, region } = parsed;
  // The files must be usable before anything starts (no Java for a typo in a name).
  const input = command === 'import' && file ? createReadStream(file) : process.stdin;
  if (input !== process.stdin) {
    const problem = await opened(input as ReadStream);
    if (problem) {
      console.error(`Cannot read ${file}: ${problem}`);
      return 1;
    }
  }
  const output = command === 'export' && file ? await openExportFile(file) : undefined;
  if (typeof output === 'string') {
    console.error(output);
    return 1;
  }
  const target = await openStore(table, region, 'events CLI').catch((error: unknown) => (error as Error).message);
  if (typeof target === 'string') {
    console.error(target);
    input.destroy();
    await output?.discard();
    return 1;
  }
  const archive = new EventArchive(createDocumentClient(target.client), target.tableName);
  const progress = terminalProgress();
  try {
    if (command === 'export') {
      const count = await exportTo(archive, output, progress);
      progress.finish();
      console.error(
        `Exported ${plural(count, 'event')} from ${target.tableName}${file ? ` to ${basename(file)}` : ''}. ${snapshotNote(target)}`,
      );
    } else {
      const { created, unchanged, replaced } = await importEvents(archive, input, progress);
      progress.finish();
      console.error(
        `Imported ${plural(created + unchanged + replaced, 'event')} into ${target.tableName}: ${created} created, ${unchanged} unchanged, ${replaced} replaced.`,
      );
    }
    if (target.note && command === 'import') console.error(target.note);
    return 0;
  } catch (error) {
    progress.finish();
    await output?.discard();
    console.error(error instanceof InvalidImportError ? error.message : `The ${command} failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await target.close();
  }
}

process.exitCode = await main();
