// The CDK app as `npx cdk synth` synthesizes it (cdk.json's feature flags, cdk-nag on) for a given
// context, read from its cloud assembly: the templates, manifest.json and cdk-nag's validation
// report. Every configuration the tests read is listed in test/infra/configurations.ts and
// synthesized once per test run, by Node itself outside jest (test/infra/synthesize-configurations.ts),
// into the run's scratch directory, and every test file reads that one synthesis
// (test/infra/synthesis-store.ts). The fast tier's global setup starts synthesizing as the run
// starts; synthesize() waits for the configuration it needs, and where nothing synthesizes it yet
// (the system tier) has the configurations of its test file synthesized there and then. A
// configuration the app refuses throws its error here, as the synthesis did; a context that
// configurations.ts does not list fails, naming the file. The region defaults to TEST_REGION,
// never the CLI's us-east-1 fallback.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import type { StageConfig } from '../../lib/cdk/stage-config.ts';
import { CONFIGURATIONS, configurationKey, type ConstructIds, type ProbeName, type StoredSynthesis } from './configurations.ts';
import { configurationName, storedSynthesis } from './synthesis-store.ts';

export { TEST_REGION } from './configurations.ts';

/** One stack of the assembly, as manifest.json describes it. */
export interface SynthesizedStack {
  stackName: string;
  template: Template;
  /** The stacks it is deployed after, by name. */
  dependencies: string[];
  /** Of its environment; undefined when the app leaves it to the deploying credentials. */
  account: string | undefined;
  region: string | undefined;
  terminationProtection: boolean;
}

export interface NagViolation {
  ruleName: string;
  severity: string;
  paths: string[];
}

export interface Synthesized {
  /** The stage configuration the app read from the context. */
  config: StageConfig;
  api: SynthesizedStack;
  mock: SynthesizedStack;
  /** Production only. */
  account: SynthesizedStack | undefined;
  ci: SynthesizedStack[];
  apiTemplate: Template;
  mockTemplate: Template;
  /** The logical ids of the API stack's constructs the tests look up (test/infra/configurations.ts). */
  ids: ConstructIds;
  /** The cloud assembly directory. */
  outdir: string;
  /** What the synthesizing process had set of SYNTHESIS_ENVIRONMENT. */
  environment: Record<string, string | undefined>;
  /** cdk-nag's findings (violations of any severity) from the validation report. */
  nagViolations: NagViolation[];
}

const read = (directory: string, file: string) => JSON.parse(readFileSync(join(directory, file), 'utf8')) as unknown;

const TESTS = fileURLToPath(new URL('..', import.meta.url));

/** The configuration listed under this name, for the running test file, which it must list as reading it. */
function storedFor(name: string): StoredSynthesis {
  const testFile = relative(TESTS, expect.getState().testPath ?? '');
  if (!CONFIGURATIONS[name]!.readBy.includes(testFile)) {
    throw new Error(`test/infra/configurations.ts does not list ${testFile} as reading "${name}": add it to that configuration's readBy.`);
  }
  return storedSynthesis(name, testFile);
}

const cache = new Map<string, Synthesized>();

/** The synthesis of this context (beside cdk.json's); throws the app's error for a configuration it refuses. */
export function synthesize(context: Record<string, string> = {}): Synthesized {
  const name = configurationName(configurationKey({ context }));
  if (name === undefined) {
    throw new Error(
      `The context ${JSON.stringify(context)} is not in test/infra/configurations.ts: add it there, and each run synthesizes it once with the others.`,
    );
  }
  const cached = cache.get(name);
  if (cached) return cached;
  const stored = storedFor(name);
  if (stored.error !== undefined) throw new Error(stored.error);
  const synthesized = fromAssembly(stored);
  cache.set(name, synthesized);
  return synthesized;
}

/** A configuration with constructs of a test's own added (test/infra/nag-rule-probes.ts): the error synthesis failed with, if it did, and cdk-nag's findings. */
export function synthesizeProbe(probe: ProbeName): { error: string | undefined; nagViolations: NagViolation[] } {
  const [name] = Object.entries(CONFIGURATIONS).find(([, configuration]) => configuration.probe === probe) ?? [];
  if (name === undefined) throw new Error(`test/infra/configurations.ts lists no configuration with the probe ${probe}`);
  const stored = storedFor(name);
  if (stored.outdir === undefined) throw new Error(`The app with the probe ${probe} was not synthesized: ${stored.error ?? ''}`);
  return { error: stored.error, nagViolations: nagViolationsIn(stored.outdir) };
}

function fromAssembly(stored: StoredSynthesis): Synthesized {
  const { outdir, app } = stored;
  if (outdir === undefined || app === undefined) throw new Error(`"${stored.name}" has no assembly`);
  const manifest = read(outdir, 'manifest.json') as {
    artifacts: Record<
      string,
      {
        type: string;
        environment?: string;
        dependencies?: string[];
        properties?: { templateFile?: string; terminationProtection?: boolean };
      }
    >;
  };
  const stacks = new Map<string, SynthesizedStack>();
  for (const [stackName, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.type !== 'aws:cloudformation:stack') continue;
    // aws://<account>/<region>, either `unknown-...` when left to the deploying credentials.
    const [account, region] = (artifact.environment ?? '').replace('aws://', '').split('/');
    let template: Template | undefined;
    stacks.set(stackName, {
      stackName,
      get template() {
        template ??= Template.fromJSON(read(outdir, artifact.properties!.templateFile!) as Record<string, unknown>);
        return template;
      },
      dependencies: (artifact.dependencies ?? []).filter(
        (dependency) => manifest.artifacts[dependency]?.type === 'aws:cloudformation:stack',
      ),
      account: account?.startsWith('unknown-') ? undefined : account,
      region: region?.startsWith('unknown-') ? undefined : region,
      terminationProtection: artifact.properties?.terminationProtection ?? false,
    });
  }
  const stack = (name: string) => {
    const found = stacks.get(name);
    if (!found) throw new Error(`no stack ${name} in ${outdir}`);
    return found;
  };
  const api = stack(app.stacks.api);
  const mock = stack(app.stacks.mock);
  return {
    config: app.config as StageConfig,
    api,
    mock,
    account: app.stacks.account === undefined ? undefined : stack(app.stacks.account),
    ci: app.stacks.ci.map(stack),
    get apiTemplate() {
      return api.template;
    },
    get mockTemplate() {
      return mock.template;
    },
    ids: app.ids,
    outdir,
    environment: stored.environment,
    nagViolations: nagViolationsIn(outdir),
  };
}

/** Every CloudFormation template of a cloud assembly: file name, path and text. */
export function templateFiles(outdir: string): { file: string; path: string; text: string }[] {
  return readdirSync(outdir)
    .filter((file) => file.endsWith('.template.json'))
    .map((file) => ({ file, path: join(outdir, file), text: readFileSync(join(outdir, file), 'utf8') }));
}

function nagViolationsIn(outdir: string): NagViolation[] {
  const report = read(outdir, 'validation-report.json') as {
    pluginReports: { violations: { ruleName: string; severity: string; violatingConstructs: { constructPath: string }[] }[] }[];
  };
  return report.pluginReports.flatMap((plugin) =>
    plugin.violations.map((v) => ({
      ruleName: v.ruleName,
      severity: v.severity,
      paths: v.violatingConstructs.map((c) => c.constructPath),
    })),
  );
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }>;

export function resourcesOfType(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** `/v1.1/special-events/{eventId}` for an AWS::ApiGateway::Resource logical id, from its PathPart chain. */
export function resourcePath(template: Template, resourceId: unknown): string {
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const parts: string[] = [];
  let current = resourceId;
  while (current && typeof current === 'object' && 'Ref' in current) {
    const resource = resources[(current as { Ref: string }).Ref];
    if (!resource) break;
    parts.unshift(String(resource.Properties?.PathPart));
    current = resource.Properties?.ParentId;
  }
  return `/${parts.join('/')}`;
}
