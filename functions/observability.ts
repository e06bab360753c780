// Powertools logger and metrics, one instance per container. Service name, log level and
// metrics namespace come from the standard POWERTOOLS_* environment variables.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export const logger = new Logger();
// Marked pure so that esbuild leaves Metrics out of a bundle that never uses it (the authorizer
// and the webhook functions publish no metrics), which would otherwise load and construct it at
// every cold start for nothing: 12 KB of the authorizer's bundle (docs/PERFORMANCE.md).
export const metrics = /* @__PURE__ */ new Metrics();
