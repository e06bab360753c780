// The functions the stack deploys, as the local Lambda runs them: each route's handler, the
// authorizer and the webhook pipeline's two, each with its bundle (scripts/build.ts puts one per
// function under the bundles directory) and its FUNCTION_SETTINGS row (functions/deployment.ts).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { routes } from '../../functions/routes.ts';
import { AUTHORIZER_HANDLER, WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { FUNCTION_SETTINGS } from '../../functions/deployment.ts';
import type { FunctionConfiguration } from './lambda-runtime.ts';

/** The functions the stack deploys, by name: each route's handler, the authorizer and the webhook functions, with their FUNCTION_SETTINGS rows. */
export function deployedFunctions(functionsDirectory: string): Record<string, FunctionConfiguration> {
  const bundle = (name: string) => pathToFileURL(resolve(functionsDirectory, name, 'index.mjs')).href;
  const functions: Record<string, FunctionConfiguration> = {
    [AUTHORIZER_HANDLER]: { bundleUrl: bundle(AUTHORIZER_HANDLER), settings: FUNCTION_SETTINGS.authorizer },
  };
  for (const route of routes) functions[route.handler] = { bundleUrl: bundle(route.handler), settings: FUNCTION_SETTINGS.handler };
  functions[WEBHOOK_FUNCTIONS.consumer.handler] = {
    bundleUrl: bundle(WEBHOOK_FUNCTIONS.consumer.handler),
    settings: FUNCTION_SETTINGS.webhookConsumer,
  };
  functions[WEBHOOK_FUNCTIONS.delivery.handler] = {
    bundleUrl: bundle(WEBHOOK_FUNCTIONS.delivery.handler),
    settings: FUNCTION_SETTINGS.webhookDelivery,
  };
  return functions;
}
