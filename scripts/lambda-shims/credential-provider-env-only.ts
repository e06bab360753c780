// Replaces @aws-sdk/credential-provider-node in Lambda bundles (see scripts/build.ts).
// Lambda always hands a function its role's credentials in environment variables, and the local
// API sets them too, so the default chain's SSO, INI-file, IMDS and STS providers (and the nested
// STS/SSO clients they pull in, 139 KB minified) are dead weight in a handler bundle, and loading
// them costs cold start: 46 ms (95% interval 5 to 73 ms) in paired rounds on a loaded machine
// (bench/cold-start/paired.ts). The SDK's chain tries the environment first, so on Lambda both answer alike.
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}) => fromEnv(init);
