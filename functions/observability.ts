// Powertools logger and metrics, one instance per container. Service name, log level and
// metrics namespace come from the standard POWERTOOLS_* environment variables.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export const logger = new Logger();
export const metrics = new Metrics();
