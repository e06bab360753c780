// Synthesizes the CDK app as `npx cdk synth` does (cdk.json's feature flags, cdk-nag on) for a
// given context, into a temporary directory, and hands back the templates. Each configuration is
// synthesized once per test file: a second call with the same context returns the same result
// (synthesis is the slow part of the infrastructure tests), and its directory is removed when the
// process exits. The region defaults to TEST_REGION, never the CLI's us-east-1 fallback.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addMuseumStacks, type MuseumApp } from '../../lib/cdk/museum-app.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };

export interface Synthesized extends MuseumApp {
  apiTemplate: Template;
  mockTemplate: Template;
  outdir: string;
  /** cdk-nag's findings (violations of any severity) from the validation report. */
  nagViolations: { ruleName: string; severity: string; paths: string[] }[];
  cleanup: () => void;
}

/** A region that is not the CDK CLI's fallback, so a leaked us-east-1 shows. */
export const TEST_REGION = 'eu-west-1';

const cache = new Map<string, Synthesized>();
process.once('exit', () => {
  for (const synthesized of cache.values()) rmSync(synthesized.outdir, { recursive: true, force: true });
});

export function synthesize(context: Record<string, string> = {}): Synthesized {
  const full = { region: TEST_REGION, ...context };
  const key = JSON.stringify(Object.entries(full).sort(([a], [b]) => a.localeCompare(b)));
  const cached = cache.get(key);
  if (cached) return cached;
  const synthesized = synthesizeOnce(full);
  cache.set(key, synthesized);
  return synthesized;
}

function synthesizeOnce(context: Record<string, string>): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'museum-cdk-test-'));
  const remove = () => rmSync(outdir, { recursive: true, force: true });
  const app = new App({ outdir, context: { ...cdkJson.context, ...context } });
  let stacks: MuseumApp;
  try {
    stacks = addMuseumStacks(app);
    // Unacknowledged cdk-nag findings make this throw, as they make `cdk synth` fail.
    app.synth();
  } catch (error) {
    remove();
    throw error;
  }
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { violations: { ruleName: string; severity: string; violatingConstructs: { constructPath: string }[] }[] }[];
  };
  return {
    ...stacks,
    apiTemplate: Template.fromStack(stacks.api),
    mockTemplate: Template.fromStack(stacks.mock),
    outdir,
    nagViolations: report.pluginReports.flatMap((plugin) =>
      plugin.violations.map((v) => ({
        ruleName: v.ruleName,
        severity: v.severity,
        paths: v.violatingConstructs.map((c) => c.constructPath),
      })),
    ),
    // Shared by every test of the file: removed with the run's scratch directory (test/support/global-teardown.ts).
    cleanup: () => undefined,
  };
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
