// Who may see and change a subscription: its owner (a partner or an editor who created it) and
// every editor. A subscription the caller may not see is answered 404, as if it did not exist, so
// partners cannot probe each other's ids.
import * as v from 'valibot';
import { ROLES, type Role } from '../routes.ts';
import type { HttpEvent } from '../http/http.ts';
import { SubscriptionNotFoundError, type Subscription, type SubscriptionsStore } from './subscriptions-store.ts';

export interface Caller {
  username: string;
  role: Role;
}

const AuthorizerContext = v.object({ username: v.string(), role: v.picklist(ROLES) });

/** The caller the authorizer verified: its context carries `username` and `role` (functions/authorizer.ts). */
export function callerOf(event: HttpEvent): Caller {
  const context = v.safeParse(AuthorizerContext, event.requestContext.authorizer);
  if (!context.success) throw new Error('The authorizer passed no username and role');
  return context.output;
}

export function seesAll(caller: Caller): boolean {
  return caller.role === 'editor';
}

/** The subscription `id` if the caller may see it; else SubscriptionNotFoundError (404). */
export async function visibleSubscription(store: SubscriptionsStore, id: string, caller: Caller): Promise<Subscription> {
  const subscription = await store.get(id);
  if (!subscription || (!seesAll(caller) && subscription.owner !== caller.username)) throw new SubscriptionNotFoundError(id);
  return subscription;
}
