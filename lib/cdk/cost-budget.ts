// The monthly cost budget (AWS Budgets) of the production stack, notifying the alarm topic: what
// a flood of public answers (preflights, documents) from many addresses, each under the WAF's
// per-address rule, may cost is bounded by no limit a visitor shares, so it is watched. Runbook:
// docs/DEPLOY.md, "The cost budget".
import { Aws } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

/**
 * The cost budget's notifications, in percent of the monthly amount: spending so far passes 80%,
 * or AWS's forecast for the month passes 100% (a flood shows in the forecast within a day).
 */
export const COST_BUDGET_THRESHOLDS = [
  { notificationType: 'ACTUAL', threshold: 80 },
  { notificationType: 'FORECASTED', threshold: 100 },
] as const;

/**
 * A monthly cost budget of the account in the stack's region (AWS Budgets is global: it works from
 * any region, unlike CloudWatch's EstimatedCharges, which exists only in us-east-1), notifying the
 * alarm topic. Budgets needs leave to publish to the topic: given here on the stack's own topic; an
 * existing topic (`-c alarmTopicArn`) must allow budgets.amazonaws.com itself
 * (https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-sns-policy.html).
 */
export function costBudget(scope: Construct, config: StageConfig, topic: sns.ITopic): budgets.CfnBudget {
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'AwsBudgetsPublish',
      principals: [new iam.ServicePrincipal('budgets.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
    }),
  );
  return new budgets.CfnBudget(scope, 'CostBudget', {
    budget: {
      budgetType: 'COST',
      timeUnit: 'MONTHLY',
      budgetLimit: { amount: config.monthlyCostBudgetUsd, unit: 'USD' },
      costFilters: { Region: [Aws.REGION] },
    },
    notificationsWithSubscribers: COST_BUDGET_THRESHOLDS.map(({ notificationType, threshold }) => ({
      notification: { notificationType, comparisonOperator: 'GREATER_THAN', threshold, thresholdType: 'PERCENTAGE' },
      subscribers: [{ subscriptionType: 'SNS', address: topic.topicArn }],
    })),
  });
}
