#!/usr/bin/env bash
# Rolls a stage back to its previous release in seconds, without CloudFormation or CI: points
# the `live` alias of every function of MuseumApi-<stage> at the version before the one it
# serves now. Every release publishes exactly one new version of each function (its description
# names the release, lib/cdk/museum-functions.ts), so "the version before" is the previous release
# for all six alike. Usage (AWS credentials of the stage's account in the environment):
#
#   bash bin/rollback.sh prod
#
# During a canary (the first ~6 minutes of a deploy) stopping the CodeDeploy deployment is
# enough: it rolls back by itself. Afterwards, this. Then revert the bad commit on main: the next
# deploy moves the aliases again.
set -euo pipefail
stage=${1:?usage: bash bin/rollback.sh <stage>, e.g. prod}
stack="MuseumApi-$stage"
functions=$(aws cloudformation list-stack-resources --stack-name "$stack" \
  --query "StackResourceSummaries[?ResourceType=='AWS::Lambda::Function'].PhysicalResourceId" --output text)
[ -n "$functions" ] || { echo "No functions in $stack" >&2; exit 1; }
for fn in $functions; do
  current=$(aws lambda get-alias --function-name "$fn" --name live --query FunctionVersion --output text)
  previous=$(aws lambda list-versions-by-function --function-name "$fn" --query 'Versions[].Version' --output text |
    tr '\t' '\n' | grep -E '^[0-9]+$' | awk -v current="$current" '$1 < current' | sort -n | tail -n 1)
  if [ -z "$previous" ]; then
    echo "$fn: version $current is the first, left as it is" >&2
    continue
  fi
  aws lambda update-alias --function-name "$fn" --name live --function-version "$previous" --query FunctionVersion --output text >/dev/null
  echo "$fn: live $current -> $previous ($(aws lambda get-function-configuration --function-name "$fn" --qualifier "$previous" --query Description --output text))"
done
