// bin/rollback.sh against a recorded release history. There is no AWS account here, so the AWS CLI
// is a stand-in (test/infra/fake-aws-cli.ts) that serves what CloudFormation, Lambda and Parameter
// Store answer; releases are made as the production pipeline makes them: each deploy publishes one
// new version of every function, a failed canary leaves its versions behind (retained) while
// CloudFormation rolls the stack back, and a good one is recorded by the workflow's own
// "Record the release as good" step, run from .github/workflows/production.yml as written.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { routes } from '../../functions/routes.ts';
import { WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { releaseHistoryPath } from '../../lib/cdk/canary-releases.ts';
import type { FakeAwsState } from './fake-aws-cli.ts';
import { synthesize } from './synthesize.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const STACK = 'MuseumApi-prod';
const FUNCTIONS = ['MuseumApi-prod-FunctionsGetSpecialEvent1A2B-x1', 'MuseumApi-prod-FunctionsAuthorizer3C4D-y2'];
const OWN_TABLE = `${STACK}-TablesEventsE8DD42EA-1A2B3C4D5E6F`;
const RESTORED_TABLE = `${STACK}-TablesEvents-restored-20261124`;
const HISTORY = releaseHistoryPath('prod');
/** Each scenario starts the stand-in CLI dozens of times (a Node process each): on a loaded machine that takes a while. */
const SCENARIO_TIMEOUT_MS = 180_000;

const recordStep = (() => {
  const workflow = parseDocument(readFileSync(join(root, '.github/workflows/production.yml'), 'utf8')).toJS() as {
    jobs: { deploy: { steps: { name?: string; run?: string }[] } };
  };
  const step = workflow.jobs.deploy.steps.find((s) => s.name === 'Record the release as good');
  if (!step?.run) throw new Error('production.yml has no "Record the release as good" step');
  return step.run;
})();

let dir: string;
let statePath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'museum-rollback-'));
  statePath = join(dir, 'state.json');
  // `aws` on PATH is the stand-in, run by this Node (24, which runs TypeScript files itself).
  writeFileSync(join(dir, 'aws'), `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'test/infra/fake-aws-cli.ts')}" "$@"\n`);
  chmodSync(join(dir, 'aws'), 0o755);
  save({ stacks: {}, functions: Object.fromEntries(FUNCTIONS.map((fn) => [fn, { versions: {}, aliases: {} }])), parameters: {} });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const load = () => JSON.parse(readFileSync(statePath, 'utf8')) as FakeAwsState;
const save = (state: FakeAwsState) => writeFileSync(statePath, JSON.stringify(state));
const env = () => ({ ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, FAKE_AWS_STATE: statePath });
const live = () => FUNCTIONS.map((fn) => load().functions[fn]?.aliases.live?.FunctionVersion);
/** The records, oldest first: one parameter each under the history's path, named `<epoch ms>-<event>-<release>`. */
const records = (state: FakeAwsState) =>
  Object.entries(state.parameters)
    .filter(([name]) => name.startsWith(`${HISTORY}/`))
    .map(([name, versions]) => ({ name, sequence: Number(name.slice(HISTORY.length + 1).split('-')[0]), versions }))
    .sort((a, b) => a.sequence - b.sequence);
const history = () =>
  records(load()).map(({ name, versions }) => {
    // Written once, never overwritten.
    expect(versions).toHaveLength(1);
    const record = JSON.parse(versions[0]!.Value) as { event: string; release: string };
    expect(name).toMatch(new RegExp(`^${HISTORY}/\\d{13}-${record.event}-${record.release}$`));
    return record;
  });

/** One pipeline run: publish a version of every function; on a passed canary, move the aliases and record the release. */
function deploy(release: string, options: { table?: string; canary?: 'passes' | 'fails' } = {}) {
  const state = load();
  const table = options.table ?? OWN_TABLE;
  const arns: string[] = [];
  for (const fn of FUNCTIONS) {
    const target = state.functions[fn]!;
    const version = String(Object.keys(target.versions).filter((v) => v !== '$LATEST').length + 1);
    const config = { Description: `Museum Special Events API (release ${release})`, Environment: { Variables: { TABLE_NAME: table } } };
    target.versions[version] = config;
    arns.push(`arn:aws:lambda:eu-west-1:123456789012:function:${fn}:${version}`);
    if (options.canary === 'fails') continue; // CloudFormation rolls $LATEST back; the version stays
    target.versions.$LATEST = config;
    target.aliases.live = { FunctionVersion: version };
  }
  if (options.canary === 'fails') {
    save(state);
    return;
  }
  const outputs = { TableName: table, ReleaseVersions: arns.join(' ') };
  state.stacks[STACK] = { Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })) };
  save(state);
  writeFileSync(join(dir, 'cdk-outputs.json'), JSON.stringify({ [STACK]: outputs }));
  const recorded = spawnSync('bash', ['-eo', 'pipefail', '-c', recordStep], {
    cwd: dir,
    env: { ...env(), GITHUB_SHA: release },
    encoding: 'utf8',
  });
  expect(recorded.stderr).toBe('');
  expect(recorded.status).toBe(0);
}

function rollback() {
  const result = spawnSync('bash', [join(root, 'bin/rollback.sh'), 'prod'], { cwd: root, env: env(), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test(
  "after a failed canary, a rollback skips the failed release's versions and returns to the last good release",
  () => {
    deploy('r1');
    deploy('r2');
    deploy('r3', { canary: 'fails' }); // versions 3 exist, never served in full, never recorded
    deploy('r4');
    expect(live()).toEqual(['4', '4']);
    const result = rollback();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(live()).toEqual(['2', '2']);
    expect(result.stdout).toContain('rolled back from release r4 to release r2');
    expect(history().at(-1)).toMatchObject({ event: 'rolled-back', release: 'r4', to: 'r2' });
  },
  SCENARIO_TIMEOUT_MS,
);

test(
  'after a manual rollback, a second one goes further back, never to the release rolled back from; with none left it refuses and changes nothing',
  () => {
    deploy('r1');
    deploy('r2');
    deploy('r3');
    expect(rollback().status).toBe(0);
    expect(live()).toEqual(['2', '2']);
    expect(rollback().status).toBe(0);
    expect(live()).toEqual(['1', '1']); // not r3, which was rolled back from
    const recorded = history().length;
    const refused = rollback();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /rollback refused, nothing was changed: no release of prod older than the live one \(r1\) is recorded as good/,
    );
    expect(live()).toEqual(['1', '1']);
    expect(history()).toHaveLength(recorded);
    // A fix deploys and is recorded; rolling it back skips r2 and r3, both rolled back from.
    deploy('r4');
    expect(rollback().status).toBe(0);
    expect(live()).toEqual(['1', '1']);
  },
  SCENARIO_TIMEOUT_MS,
);

test(
  'a release rolled back from stays refused after more than 100 later records (each record is its own parameter)',
  () => {
    deploy('r1');
    deploy('r2');
    expect(rollback().status).toBe(0); // leaves r2 for r1
    deploy('r3');
    // 120 later records, none a target (rollbacks of other releases), as the script writes them;
    // a history kept as one parameter's versions would have lost r2's mark by now.
    const state = load();
    const start = Math.max(...records(state).map((record) => record.sequence)) + 1;
    for (let i = 0; i < 120; i += 1) {
      const value = JSON.stringify({ event: 'rolled-back', release: `x${i}`, to: 'r0', versions: {} });
      state.parameters[`${HISTORY}/${start + i}-rolled-back-x${i}`] = [{ Value: value, Version: 1, Type: 'String' }];
    }
    save(state);
    const result = rollback();
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('rolled back from release r3 to release r1');
    expect(live()).toEqual(['1', '1']);
    expect(history()).toHaveLength(125);
  },
  SCENARIO_TIMEOUT_MS,
);

test(
  'a rollback never returns to a release published for another table than the functions are now given',
  () => {
    deploy('r1', { table: OWN_TABLE });
    deploy('r2', { table: RESTORED_TABLE }); // the restore's attach
    const refused = rollback();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`for table ${RESTORED_TABLE}`);
    expect(live()).toEqual(['2', '2']);
    deploy('r3', { table: RESTORED_TABLE });
    expect(rollback().status).toBe(0);
    expect(live()).toEqual(['2', '2']);
  },
  SCENARIO_TIMEOUT_MS,
);

test(
  "a record whose versions read another table than the function's configuration is refused before any alias moves",
  () => {
    deploy('r1');
    deploy('r2');
    const state = load();
    state.functions[FUNCTIONS[1]!]!.versions['1']!.Environment.Variables.TABLE_NAME = RESTORED_TABLE;
    save(state);
    const refused = rollback();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`version 1 of ${FUNCTIONS[1]!} (release r1) reads {"TABLE_NAME":"${RESTORED_TABLE}"`);
    expect(live()).toEqual(['2', '2']);
    expect(history().map((record) => record.event)).toEqual(['released', 'released']);
  },
  SCENARIO_TIMEOUT_MS,
);

test(
  'with no release ever recorded, or while a canary shifts traffic, it refuses with what to do instead',
  () => {
    deploy('r1', { canary: 'fails' });
    const state = load();
    state.stacks[STACK] = {
      Outputs: [
        { OutputKey: 'TableName', OutputValue: OWN_TABLE },
        {
          OutputKey: 'ReleaseVersions',
          OutputValue: FUNCTIONS.map((fn) => `arn:aws:lambda:eu-west-1:123456789012:function:${fn}:1`).join(' '),
        },
      ],
    };
    for (const fn of FUNCTIONS) state.functions[fn]!.aliases.live = { FunctionVersion: '1' };
    save(state);
    expect(rollback().stderr).toMatch(
      /no release of prod was ever recorded as good \(no record under \/museum-special-events\/prod\/releases\)/,
    );
    deploy('r2');
    deploy('r3');
    const shifting = load();
    shifting.functions[FUNCTIONS[0]!]!.aliases.live = { FunctionVersion: '2', RoutingConfig: { AdditionalVersionWeights: { 3: 0.1 } } };
    save(shifting);
    const refused = rollback();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('aws deploy stop-deployment --auto-rollback-enabled');
  },
  SCENARIO_TIMEOUT_MS,
);

test(
  'the stack output the release record is built from lists exactly the version each `live` alias serves after the deploy',
  () => {
    const app = synthesize({ alarmEmail: 'ops@museum.example' });
    const template = app.apiTemplate.toJSON() as {
      Resources: Record<string, { Type: string; Properties?: any }>;
      Outputs: Record<string, { Value: any }>;
    };
    const listed = (template.Outputs.ReleaseVersions?.Value['Fn::Join'] as [string, { Ref: string }[]])[1].map((part) => part.Ref).sort();
    const served = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Alias' && resource.Properties?.Name === 'live')
      .map((alias) => (alias.Properties?.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0])
      .sort();
    // Every route's function, the authorizer and the webhook functions are published behind `live`.
    expect(served).toHaveLength(new Set(routes.map((route) => route.handler)).size + 1 + Object.keys(WEBHOOK_FUNCTIONS).length);
    expect(listed).toEqual(served);
  },
  SCENARIO_TIMEOUT_MS,
);
