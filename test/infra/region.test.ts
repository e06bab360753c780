// The region is whatever the team configured, never the CDK CLI's us-east-1 fallback: a prod
// synthesis for another region names that region in every manifest entry and template, and a
// synthesis without a region is refused (lib/cdk/deployment-region.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDeploymentRegion } from '../../lib/cdk/deployment-region.ts';
import { synthesize, templateFiles } from './synthesize.ts';

const REGION = 'ap-southeast-2';
const context = (values: Record<string, unknown>) => ({ tryGetContext: (key: string) => values[key] });

test('production and the CI identities synthesized for a configured region carry it in every manifest entry and no us-east-1 anywhere', () => {
  const app = synthesize({
    region: REGION,
    alarmEmail: 'ops@museum.example',
    githubRepository: 'museum/special-events-api',
    productionAccount: '111111111111',
    previewAccount: '222222222222',
  });
  const manifest = JSON.parse(readFileSync(join(app.outdir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; environment?: string }>;
  };
  const stacks = Object.entries(manifest.artifacts).filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack');
  expect(stacks.map(([name]) => name).sort()).toEqual(
    [
      'MuseumApi-prod',
      'MuseumApiGatewayAccount',
      'MuseumCiIdentities-preview',
      'MuseumCiIdentities-production',
      'MuseumMockApi-prod',
    ].sort(),
  );
  for (const [name, artifact] of stacks) expect([name, artifact.environment?.split('/').at(-1)]).toEqual([name, REGION]);
  const templates = templateFiles(app.outdir);
  expect(templates).toHaveLength(5);
  for (const { file, text } of templates) {
    expect([file, text.includes('us-east-1')]).toEqual([file, false]);
  }
  expect(templates.find(({ file }) => file === 'MuseumApi-prod.template.json')?.text).toContain(REGION);
});

test('a synthesis without a region is refused instead of falling back to us-east-1', () => {
  expect(() => readDeploymentRegion(context({}), {})).toThrow(/No region: set AWS_REGION/);
  expect(() => readDeploymentRegion(context({ region: '' }), { AWS_REGION: ' ' })).toThrow(/No region/);
  // The CLI's own fallback (CDK_DEFAULT_REGION) is never read.
  expect(() => readDeploymentRegion(context({}), { CDK_DEFAULT_REGION: 'us-east-1' })).toThrow(/No region/);
});

test('the region comes from -c region, else AWS_REGION, else AWS_DEFAULT_REGION, and must look like one', () => {
  expect(readDeploymentRegion(context({ region: 'eu-west-1' }), { AWS_REGION: 'eu-central-1' })).toBe('eu-west-1');
  expect(readDeploymentRegion(context({}), { AWS_REGION: 'eu-central-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('eu-central-1');
  expect(readDeploymentRegion(context({}), { AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-west-2');
  expect(() => readDeploymentRegion(context({ region: 'Ireland' }), {})).toThrow(/not an AWS region/);
});
