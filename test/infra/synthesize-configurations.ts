// Synthesizes the configurations of test/infra/configurations.ts as `npx cdk synth` does (cdk.json's
// context and feature flags, cdk-nag on) into the run's store of syntheses
// (test/infra/synthesis-store.ts): one directory per configuration with its cloud assembly, and
// beside it a JSON file with the error the app threw, or the description of the app it built (its
// stage configuration, its stacks and the logical ids of the constructs the tests look up). Run by
// Node itself (its own type stripping), outside jest's module registry and its coverage
// instrumentation, where loading aws-cdk-lib and synthesizing cost several times as much.
//
//   node test/infra/synthesize-configurations.ts <store>                  the batch: its list (all without one), in SYNTHESIS_PROCESSES processes
//   node test/infra/synthesize-configurations.ts <store> --process        one of those processes
//   node test/infra/synthesize-configurations.ts <store> --only <name>...  these, in this order (a test file's, no batch running)
//
// The processes of a batch take configurations from one list, the ones a waiting test asked for
// first; each configuration is claimed by a lock file, so two processes (of a batch, or a test
// file's own) never synthesize the same one. With MUSEUM_SYNTHESIS_V8_COVERAGE set, the processes
// write their V8 coverage there (NODE_V8_COVERAGE), which test/support/coverage-report.ts merges.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IConstruct } from 'constructs';
import type { MuseumApp } from '../../lib/cdk/museum-app.ts';
import { AUTHORIZER_HANDLER } from '../../functions/unrouted-functions.ts';
import { CONFIGURATIONS, fullContext, SYNTHESIS_ENVIRONMENT, type AppDescription, type StoredSynthesis } from './configurations.ts';
import { batchNames, claim, configurationKeyOf, isClaimed, storePaths, wantedNames, writeJsonAtomically } from './synthesis-store.ts';

/** Processes of a batch: one a core, at most two (each pays about 10 s of CPU to load and warm up aws-cdk-lib and its template validation). */
const SYNTHESIS_PROCESSES = Number(process.env.MUSEUM_SYNTHESIS_PROCESSES) || Math.min(2, availableParallelism());

const [store, mode, ...only] = process.argv.slice(2);
if (!store) throw new Error('usage: node test/infra/synthesize-configurations.ts <store> [--process | --only <name>...]');
const paths = storePaths(store);

if (mode === undefined) await runBatch();
else if (mode === '--process') await synthesizeFromList(nextUnclaimed);
else if (mode === '--only' && only.length > 0 && only.every((name) => name in CONFIGURATIONS)) await synthesizeFromList(() => only.shift());
else throw new Error(`unknown arguments: ${process.argv.slice(3).join(' ')}`);

/** Runs SYNTHESIS_PROCESSES processes over the list, then writes the batch's outcome. */
async function runBatch(): Promise<void> {
  const coverage = process.env.MUSEUM_SYNTHESIS_V8_COVERAGE;
  const env = { ...process.env, ...(coverage ? { NODE_V8_COVERAGE: coverage } : {}) };
  mkdirSync(store!, { recursive: true });
  const children = Array.from({ length: Math.min(SYNTHESIS_PROCESSES, batchNames(paths).length) }, (_, index) => {
    const log = paths.log(`process-${index + 1}`);
    const output = openSync(log, 'a');
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), store!, '--process'], {
      env,
      stdio: ['ignore', output, output],
    });
    return {
      child,
      log,
      exit: new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 1))),
    };
  });
  // Stopped (the run ended without needing every configuration): stop the processes too.
  process.once('SIGTERM', () => {
    for (const { child } of children) child.kill('SIGTERM');
  });
  const exits = await Promise.all(children.map((c) => c.exit));
  writeJsonAtomically(paths.done, { exits: exits.map((exit, index) => ({ exit, log: children[index]!.log })) });
  process.exitCode = exits.every((exit) => exit === 0) ? 0 : 1;
}

/** The next configuration no process has claimed: one a test is waiting for first, else in the list's order. */
function nextUnclaimed(): string | undefined {
  return [...wantedNames(paths), ...batchNames(paths)].find((name) => !isClaimed(paths, name));
}

async function synthesizeFromList(next: () => string | undefined): Promise<void> {
  Object.assign(process.env, SYNTHESIS_ENVIRONMENT);
  const [{ App, CfnElement }, { addMuseumStacks }, { NAG_RULE_PROBES }] = await Promise.all([
    import('aws-cdk-lib'),
    import('../../lib/cdk/museum-app.ts'),
    import('./nag-rule-probes.ts'),
  ]);
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
  for (let name = next(); name !== undefined; name = next()) {
    // The store is gone: the run is over (its teardown removed the scratch directory).
    if (!existsSync(store!)) return;
    if (!claim(paths, name)) continue;
    const configuration = CONFIGURATIONS[name]!;
    const outdir = paths.assembly(name);
    const started = performance.now();
    const stored: StoredSynthesis = {
      name,
      key: configurationKeyOf(name),
      environment: Object.fromEntries(Object.keys(SYNTHESIS_ENVIRONMENT).map((variable) => [variable, process.env[variable]])),
    };
    try {
      const app = new App({ outdir, context: { ...cdkJson.context, ...fullContext(configuration.context) } });
      const stacks = addMuseumStacks(app);
      if (configuration.probe) NAG_RULE_PROBES[configuration.probe](stacks.api);
      // Unacknowledged cdk-nag findings make this throw, as they make `cdk synth` fail.
      app.synth();
      stored.app = describeApp(stacks, (construct) => CfnElement.isCfnElement(construct));
    } catch (error) {
      stored.error = error instanceof Error ? error.message : String(error);
    }
    if (existsSync(join(outdir, 'manifest.json')) || existsSync(join(outdir, 'validation-report.json'))) stored.outdir = outdir;
    writeJsonAtomically(paths.result(name), stored);
    console.log(
      `${name}: ${((performance.now() - started) / 1000).toFixed(1)} s${stored.error === undefined ? '' : ', refused or failed'}`,
    );
  }
}

/** What the tests look up by construct, as logical ids: the same `stack.getLogicalId(construct.node.defaultChild)` they used to call. */
function describeApp({ config, api, mock, account, ci }: MuseumApp, isCfnElement: (construct: IConstruct) => boolean): AppDescription {
  // An L2 construct's resource is its default child; an L1 construct (the web ACL, the IP sets) is its own.
  const optionalId = (construct: IConstruct): string | undefined => {
    const element = construct.node.defaultChild ?? construct;
    return isCfnElement(element) ? api.getLogicalId(element as never) : undefined;
  };
  const id = (construct: IConstruct): string => {
    const found = optionalId(construct);
    if (found === undefined) throw new Error(`${construct.node.path} has no CloudFormation resource`);
    return found;
  };
  const functions = new Map([...api.functions.handlers, ...api.functions.background]);
  functions.set(AUTHORIZER_HANDLER, api.functions.authorizer);
  return {
    config: JSON.parse(JSON.stringify(config)) as AppDescription['config'],
    stacks: { api: api.stackName, mock: mock.stackName, account: account?.stackName, ci: ci.map((stack) => stack.stackName) },
    ids: {
      functions: Object.fromEntries(
        [...functions].map(([name, fn]) => [
          name,
          { function: id(fn), role: id(fn.role!), defaultPolicy: id(fn.role!.node.findChild('DefaultPolicy')) },
        ]),
      ),
      live: api.functions.allLive.map(({ fn, alias }) => ({ function: id(fn), alias: id(alias) })),
      liveAuthorizer: id(api.functions.liveAuthorizer),
      tables: { events: optionalId(api.tables.events), idempotency: optionalId(api.tables.idempotency) },
      authorizer: id(api.api.authorizer),
      accessLogs: id(api.api.accessLogs),
      ...(api.firewall && {
        firewall: {
          webAcl: id(api.firewall.webAcl),
          logGroup: id(api.firewall.logGroup),
          blockedIpv4: id(api.firewall.blockedAddresses.ipv4),
          blockedIpv6: id(api.firewall.blockedAddresses.ipv6),
        },
      }),
      ...(api.monitoring && { monitoringTopic: optionalId(api.monitoring.topic) }),
      ...(api.releases && { releaseAlarms: api.releases.releaseAlarms.map(id) }),
    },
  };
}
