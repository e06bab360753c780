#!/usr/bin/env bash
# Rolls a stage back, in seconds and without CloudFormation or CI, to the last release that is
# known to be good: points the `live` alias of every function of MuseumApi-<stage> at the versions
# of that release. Usage (AWS credentials of the stage's account; needs the AWS CLI and jq):
#
#   bash bin/rollback.sh prod
#
# Known to be good means recorded in the stage's release history: one SSM parameter per record
# under /museum-special-events/<stage>/releases, named <epoch milliseconds>-<event>-<release> and
# never overwritten, so no record expires (one parameter's own history would keep only its 100
# newest versions). The production workflow adds {"event":"released",...} after a deploy whose
# canaries and smoke test passed; this script adds {"event":"rolled-back",...} naming the release
# it leaves. It returns to the newest released record that
#   - is not the live release and was never rolled back (a failed canary is never recorded),
#   - was published for the functions the stack has now, and for the table they are given now
#     (each version's TABLE_NAME and IDEMPOTENCY_TABLE_NAME are checked against the function's
#     current configuration, which is what its role grants);
# and refuses, changing nothing, when there is none. During a canary, stop the CodeDeploy
# deployment instead: it moves the aliases back by itself.
set -euo pipefail
stage=${1:?usage: bash bin/rollback.sh <stage>, e.g. prod}
stack="MuseumApi-$stage"
history_path="/museum-special-events/$stage/releases"
refuse() { printf 'rollback refused, nothing was changed: %s\n' "$*" >&2; exit 1; }

outputs=$(aws cloudformation describe-stacks --stack-name "$stack" --output json | jq -c '.Stacks[0].Outputs // [] | map({(.OutputKey): .OutputValue}) | add // {}')
table=$(jq -r '.TableName // empty' <<<"$outputs")
functions=$(jq -r '.ReleaseVersions // "" | split(" ") | map(select(. != "") | capture(":function:(?<name>[^:]+):").name) | sort | .[]' <<<"$outputs")
[ -n "$functions" ] && [ -n "$table" ] || refuse "$stack has no ReleaseVersions or TableName output (deployed by an older version of this app?)"

# What serves now: one version per function, and the release named in its description.
live='{}'
live_release=
for fn in $functions; do
  alias=$(aws lambda get-alias --function-name "$fn" --name live --output json)
  if jq -e '(.RoutingConfig.AdditionalVersionWeights // {}) | length > 0' <<<"$alias" >/dev/null; then
    refuse "$fn is shifting traffic between two versions (a CodeDeploy deployment is running): stop it, and it moves the aliases back itself: aws deploy stop-deployment --auto-rollback-enabled --deployment-id <id>"
  fi
  version=$(jq -r .FunctionVersion <<<"$alias")
  live=$(jq -c --arg fn "$fn" --arg version "$version" '. + {($fn): $version}' <<<"$live")
  if [ -z "$live_release" ]; then
    live_release=$(aws lambda get-function-configuration --function-name "$fn" --qualifier "$version" --output json |
      jq -r '[.Description // "" | capture("\\(release (?<release>[^)]+)\\)") | .release] | first // "unknown"')
  fi
done

# Every record, oldest first (the CLI follows NextToken and prints all pages as one list).
history=$(aws ssm get-parameters-by-path --path "$history_path" --output json)
jq -e '[.Parameters[].Value | (try fromjson catch null) | objects | select(.event == "released")] | length > 0' <<<"$history" >/dev/null ||
  refuse "no release of $stage was ever recorded as good (no record under $history_path): the production workflow records one after each deploy whose canaries pass"

target=$(jq -c --arg path "$history_path" --arg table "$table" --arg live_release "$live_release" --argjson live "$live" --argjson functions "$(jq -Rn '[inputs]' <<<"$functions")" '
  [.Parameters | sort_by(.Name | ltrimstr("\($path)/") | split("-")[0] | tonumber) | .[].Value | (try fromjson catch null) | objects] as $records
  | ([$records[] | select(.event == "rolled-back") | .release] + [$live_release]) as $bad
  | [$records[] | select(.event == "released" and .table == $table and .versions != $live
      and ((.versions | keys) == $functions) and (.release as $release | $bad | index($release) | not))]
  | last // empty' <<<"$history")
[ -n "$target" ] || refuse "no release of $stage older than the live one ($live_release) is recorded as good for table $table and these functions; releases rolled back from are never returned to"
target_release=$(jq -r .release <<<"$target")

# A version reads the tables it was published with: returning to one that reads other tables
# than the function's role now grants would answer every request with AccessDenied.
for fn in $functions; do
  version=$(jq -r --arg fn "$fn" '.versions[$fn]' <<<"$target")
  reads='.Environment.Variables // {} | {TABLE_NAME, IDEMPOTENCY_TABLE_NAME}'
  then_tables=$(aws lambda get-function-configuration --function-name "$fn" --qualifier "$version" --output json | jq -c "$reads")
  now_tables=$(aws lambda get-function-configuration --function-name "$fn" --output json | jq -c "$reads")
  [ "$then_tables" = "$now_tables" ] || refuse "version $version of $fn (release $target_release) reads $then_tables, but the function is now configured and granted for $now_tables"
done

# Recorded first: if moving an alias fails half-way, running this again still never returns here.
record=$(jq -nc --arg release "$live_release" --arg to "$target_release" --argjson versions "$live" '{event: "rolled-back", release: $release, to: $to, versions: $versions}')
aws ssm put-parameter --name "$history_path/$(jq -nr 'now * 1000 | floor')-rolled-back-$live_release" --type String --value "$record" --output json >/dev/null
for fn in $functions; do
  version=$(jq -r --arg fn "$fn" '.versions[$fn]' <<<"$target")
  aws lambda update-alias --function-name "$fn" --name live --function-version "$version" --output json >/dev/null
  echo "$fn: live $(jq -r --arg fn "$fn" '.[$fn]' <<<"$live") -> $version"
done
echo "$stack: rolled back from release $live_release to release $target_release (recorded under $history_path)"
