#!/bin/bash
# Writes each case's expected.txt from what Terraform prints for it: run
# from this directory with Terraform 1.11.4 on PATH, e.g.
#     tests/golden/plans/make.sh            (all cases)
#     tests/golden/plans/make.sh destroy    (one)
# Each case's `steps` holds one command a line: `apply ARGS` (run with
# -auto-approve, its output ignored), `config FILE` (FILE, in the case's
# folder, becomes main.tf: the configuration changes), and last the
# `plan ARGS` whose output is the golden text. The text is normalized as the test normalizes
# cairn's: every object id (random) becomes <id>, the tool's name becomes
# cairn, and the `Refreshing state...` lines (printed in no fixed order by
# Terraform) are sorted.
set -euo pipefail
export CHECKPOINT_DISABLE=1
here=$(cd "$(dirname "$0")" && pwd)
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=($(cd "$here" && ls -d */ | tr -d /))
for case in "${cases[@]}"; do
  work=$(mktemp -d)
  cp "$here/$case"/*.tf "$work/"
  (
    cd "$work"
    terraform init -no-color >/dev/null
    out=""
    while read -r command args; do
      if [ "$command" = config ]; then
        # The configuration changes: FILE becomes main.tf.
        cp "$here/$case/$args" main.tf
      elif [ "$command" = apply ]; then
        # shellcheck disable=SC2086
        terraform apply -auto-approve -no-color $args >/dev/null
      else
        # shellcheck disable=SC2086
        out=$(terraform "$command" -no-color $args; echo x)
      fi
    done < "$here/$case/steps"
    out=${out%x}
    {
      printf '%s' "$out" | grep ': Refreshing state\.\.\.' | sort || true
      printf '%s' "$out" | grep -v ': Refreshing state\.\.\.'
    } | sed -E 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<id>/g; s/Terraform/cairn/g; s/terraform apply/cairn apply/g' \
      > "$here/$case/expected.txt"
  )
  rm -rf "$work"
  echo "$case: written"
done
