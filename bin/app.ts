// The CDK app: `npx cdk synth|deploy|destroy [-c stage=pr-42]` (cdk.json builds the bundles first).
import { App } from 'aws-cdk-lib';
import { addMuseumStacks } from '../lib/cdk/museum-app.ts';

addMuseumStacks(new App());
