// cfn-lint (AWS's CloudFormation linter: resource schemas, IAM policies, intrinsic functions, best
// practices) over every template the CDK app synthesizes, in the configurations that deploy: production,
// a preview with the CI identities stacks, production with a custom domain, and production with restored
// tables attached and with attached tables managed by the stack. synthesize() writes the templates into
// the run's temporary directory; one cfn-lint run reads each distinct template once. No error and no
// warning is allowed beyond the accepted findings below, each with its reason; an accepted finding that
// no longer occurs is removed from the table.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { RETAINED_ON_REPLACEMENT_ONLY } from '../../lib/cdk/webhook-pipeline.ts';
import { synthesize, templateFiles, TEST_REGION } from '../infra/synthesize.ts';

/** The version on CI's machine image (`.ci/run` checks it is installed); the accepted findings are judged against it. */
const CFN_LINT_VERSION = '1.51.0';
const INSTALL = `cfn-lint is not installed: install it with \`pip install cfn-lint==${CFN_LINT_VERSION}\` (or \`pipx install cfn-lint==${CFN_LINT_VERSION}\`), then run this test again`;

const CI = { githubRepository: 'museum/special-events-api', productionAccount: '111111111111', previewAccount: '222222222222' };
const ALARMS = { alarmEmail: 'ops@museum.example' };
const RESTORED = {
  eventsTableName: 'MuseumApi-prod-TablesEvents-restored-20261124',
  eventsTableStreamArn:
    'arn:aws:dynamodb:eu-west-1:123456789012:table/MuseumApi-prod-TablesEvents-restored-20261124/stream/2026-11-24T10:00:00.000',
  idempotencyTableName: 'MuseumApi-prod-TablesIdempotency-restored-20261124',
};
const CONFIGURATIONS: Record<string, Record<string, string>> = {
  production: ALARMS,
  'preview with the CI identities': { stage: 'pr-7', ...CI },
  'production with a custom domain': {
    ...ALARMS,
    domainName: 'api.museum.example',
    certificateArn: `arn:aws:acm:${TEST_REGION}:123456789012:certificate/abc`,
  },
  'production with restored tables attached': { ...ALARMS, ...RESTORED },
  'production managing the attached tables': { ...ALARMS, ...RESTORED, manageAttachedTables: 'true' },
};

interface Finding {
  Filename: string;
  Level: 'Error' | 'Warning' | 'Informational';
  Location: { Path: (string | number)[] };
  Message: string;
  Rule: { Id: string };
}
type Resources = Record<string, { Type: string }>;

interface AcceptedFinding {
  rule: string;
  reason: string;
  matches: (finding: Finding, resources: Resources) => boolean;
}

const ACCEPTED: AcceptedFinding[] = [
  {
    rule: 'W3005',
    reason:
      "aws-cdk-lib's lambda.Function makes its CfnFunction depend on its role construct, so that the role's default policy " +
      'exists before the function; the DependsOn therefore also names the role itself, which the Role property already ' +
      'refers to. A DependsOn on a resource the function refers to anyway changes no order: harmless, and not ours to remove.',
    matches: (finding, resources) => {
      const [section, functionId] = finding.Location.Path;
      const [, roleId, referrerId] =
        /^'(\w+)' dependency already enforced by a 'GetAtt' at 'Resources\/(\w+)\/Properties\/Role'$/.exec(finding.Message) ?? [];
      return (
        section === 'Resources' &&
        typeof functionId === 'string' &&
        referrerId === functionId &&
        resources[functionId]?.Type === 'AWS::Lambda::Function' &&
        roleId !== undefined &&
        resources[roleId]?.Type === 'AWS::IAM::Role'
      );
    },
  },
  {
    rule: 'W3011',
    reason: RETAINED_ON_REPLACEMENT_ONLY,
    matches: (finding, resources) => {
      const [section, id] = finding.Location.Path;
      return section === 'Resources' && typeof id === 'string' && resources[id]?.Type === 'AWS::Lambda::EventSourceMapping';
    },
  },
];

/** Each distinct template once (a stack the same in several configurations is linted once), with the configurations that produce it. */
interface Linted {
  path: string;
  resources: Resources;
  configurations: string[];
}

let linted: Map<string, Linted>;
let findings: (Finding & { linted: Linted })[];
let version: string;

beforeAll(() => {
  const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  if (probe.error) throw new Error(`${INSTALL} (${probe.error.message})`);
  version = probe.stdout.trim();

  const byContent = new Map<string, Linted>();
  for (const [name, context] of Object.entries(CONFIGURATIONS)) {
    const { outdir } = synthesize(context);
    for (const { path, text } of templateFiles(outdir)) {
      const hash = createHash('sha256').update(text).digest('hex');
      const seen = byContent.get(hash);
      if (seen) seen.configurations.push(name);
      else byContent.set(hash, { path, resources: (JSON.parse(text) as { Resources: Resources }).Resources, configurations: [name] });
    }
  }
  linted = new Map([...byContent.values()].map((l) => [l.path, l]));

  const run = spawnSync('cfn-lint', ['--format', 'json', '--regions', TEST_REGION, '--', ...linted.keys()], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) throw new Error(`${INSTALL} (${run.error.message})`);
  // Exit status: a bit mask of 2 (errors), 4 (warnings), 8 (informational); 1 is cfn-lint failing to run.
  if ((run.status ?? 1) & 1) throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr}`);
  findings = (JSON.parse(run.stdout) as Finding[]).map((finding) => {
    const of = linted.get(finding.Filename);
    if (!of) throw new Error(`cfn-lint reported on a file it was not given: ${finding.Filename}`);
    return { ...finding, linted: of };
  });
}, 600_000);

const describeFinding = (f: Finding & { linted: Linted }) =>
  `${f.Rule.Id} ${f.Level} in ${basename(f.linted.path)} (${f.linted.configurations.join(', ')}) at ${f.Location.Path.join('/')}: ${f.Message}`;

test('every synthesized template is linted: the API, mock, account and CI identities stacks', () => {
  const stacks = new Set([...linted.keys()].map((path) => basename(path, '.template.json')));
  expect([...stacks].sort()).toEqual(
    expect.arrayContaining([
      'MuseumApi-prod',
      'MuseumApi-pr-7',
      'MuseumMockApi-prod',
      'MuseumMockApi-pr-7',
      'MuseumApiGatewayAccount',
      'MuseumCiIdentities-production',
      'MuseumCiIdentities-preview',
    ]),
  );
});

test('cfn-lint finds no error and no warning in the templates, apart from the accepted findings', () => {
  const unaccepted = findings.filter(
    (f) => f.Level !== 'Informational' && !ACCEPTED.some((a) => a.rule === f.Rule.Id && a.matches(f, f.linted.resources)),
  );
  expect({ version, findings: unaccepted.map(describeFinding) }).toEqual({ version, findings: [] });
});

test('every accepted finding still occurs (one that no longer does is removed from the table)', () => {
  const unused = ACCEPTED.filter((a) => !findings.some((f) => a.rule === f.Rule.Id && a.matches(f, f.linted.resources)));
  expect({ version, unused: unused.map((a) => `${a.rule}: ${a.reason}`) }).toEqual({ version, unused: [] });
});
