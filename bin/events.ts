// `npm run events -- export > events.jsonl` and `npm run events -- import < events.jsonl`: move
// events between stages, accounts or a backup of the museum's own (format and guarantees:
// bin/events-transfer.ts). Target: the local store, as for the users CLI (the running `npm
// start`, or the data directory), or a deployed events table with `--table <name>` (AWS
// credentials and region from the usual AWS_* settings, or --region).
// Progress goes to stderr, and only when stderr is a terminal; the data is the only thing on stdout.
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../functions/store/dynamodb-client.ts';
import { EventArchive } from '../functions/store/event-archive.ts';
import { exportEvents, importEvents, InvalidImportError, type Progress } from './events-transfer.ts';
import { openStore } from './local-store.ts';

const USAGE = `Usage: npm run events -- export|import [options]
  export            write every event to stdout, one JSON object per line
  import            read such lines from stdin; the whole file is checked before anything is written
Options:
  --table <name>    a deployed events table (the stack output TableName); default: the local run
  --region <name>   AWS region for --table (default: AWS_REGION)`;

function parseArguments(): { command: 'export' | 'import'; table?: string; region?: string } | number {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { table: { type: 'string' }, region: { type: 'string' }, help: { type: 'boolean' } } });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [command, ...extra] = positionals;
  if ((command !== 'export' && command !== 'import') || extra.length > 0) {
    console.error(`${command ? `Unknown arguments: ${positionals.join(' ')}.` : 'A command is required.'}\n${USAGE}`);
    return 2;
  }
  if (values.region !== undefined && values.table === undefined) {
    console.error(`--region applies with --table only.\n${USAGE}`);
    return 2;
  }
  if (command === 'import' && process.stdin.isTTY) {
    console.error(`import reads the events from stdin: npm run events -- import < events.jsonl\n${USAGE}`);
    return 2;
  }
  return { command, table: values.table, region: values.region };
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

async function main(): Promise<number> {
  const parsed = parseArguments();
  if (typeof parsed === 'number') return parsed;
  const { command, table, region } = parsed;
  const target = await openStore(table, region, 'events CLI').catch((error: unknown) => (error as Error).message);
  if (typeof target === 'string') {
    console.error(target);
    return 1;
  }
  const store = new EventArchive(createDocumentClient(target.client), target.tableName);
  const progress = terminalProgress();
  try {
    if (command === 'export') {
      const count = await exportEvents(store, process.stdout, progress);
      progress.finish();
      console.error(`Exported ${count} events from ${target.tableName}.`);
    } else {
      const { created, unchanged, replaced } = await importEvents(store, process.stdin, progress);
      progress.finish();
      console.error(`Imported into ${target.tableName}: ${created} created, ${unchanged} unchanged, ${replaced} replaced.`);
    }
    return 0;
  } catch (error) {
    progress.finish();
    console.error(error instanceof InvalidImportError ? error.message : `${command} failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await target.close();
  }
}

process.exitCode = await main();
