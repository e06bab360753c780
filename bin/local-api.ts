// `npm start`: the API on http://127.0.0.1:$PORT/v1.1, backed by DynamoDB Local. One Node process
// (npm's signals reach it: no shell chain) that checks every setting, takes the port, then the
// data directory's lock, builds the bundles (--build), starts DynamoDB Local, and stops all of it
// on SIGINT, SIGTERM, SIGHUP, when the process that started it (npm) is gone, or when DynamoDB
// Local itself exits. This entry point reads the command line; the run is lib/local/local-run.ts.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startLocalRun } from '../lib/local/local-run.ts';

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

/** Builds the bundles unless scripts/build.ts finds them built from these very inputs; true if it built. */
async function buildUnlessUpToDate(): Promise<boolean> {
  const { buildIfStale } = await import('../scripts/build.ts');
  return (await buildIfStale({ outdir: BUNDLES_DIRECTORY })) === 'built';
}

await startLocalRun({
  bundlesDirectory: BUNDLES_DIRECTORY,
  ...(flags.build ? { buildBundles: buildUnlessUpToDate } : {}),
  ...(flags.watch ? { watchSources: async (options) => (await import('../scripts/bundle-watch.ts')).watchSources(options) } : {}),
});
