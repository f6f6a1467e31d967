#!/usr/bin/env bash
# Runs every FuzzXxx target of the module for FUZZTIME each (go test -fuzz
# takes one package and one target at a time). A target that fails only
# because the fuzzing engine's own deadline passed ("context deadline
# exceeded" with no failing input written: a loaded machine, not a finding)
# is run once more; a real finding fails at once.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in $(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | sort); do
  dir=./$(dirname "$f")
  for fn in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
    for try in 1 2; do
      echo "fuzz: $fn in $dir ($FUZZTIME)"
      if "$GO" test -run '^$' -fuzz "^$fn\$" -fuzztime "$FUZZTIME" "$dir" >"$out" 2>&1; then
        cat "$out"
        break
      fi
      cat "$out"
      if [ "$try" = 1 ] && grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
        echo "fuzz: $fn stopped on the engine's deadline, not on an input; running it once more"
        continue
      fi
      exit 1
    done
  done
done
