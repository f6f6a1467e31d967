#!/usr/bin/env bash
# Explores with every FuzzXxx target of the module for FUZZTIME each (go test
# -fuzz takes one package and one target at a time). This is exploration, run
# by a developer before handing a change in; CI never runs it: `go test`
# replays each target's seeds and committed corpus (testdata/fuzz/FuzzXxx) on
# every run, which is the deterministic gate. See docs/contributing.md.
#
# SINCE=<rev> fuzzes only the targets whose package, or a package of this
# module it imports, has a file changed since <rev> (committed, staged,
# unstaged or untracked). RUN=<regexp> keeps only the targets it matches.
# KEEP=<n> copies, after each target's run, up to n of the newest inputs the
# engine kept as interesting (go's cache corpus) into the package's
# testdata/fuzz/FuzzXxx/, to be committed: the gate then replays them.
#
# A target that fails only because the fuzzing engine's own deadline passed
# ("context deadline exceeded" with no failing input written: on a loaded
# machine, gathering the baseline coverage of a large cached corpus can take
# the whole FUZZTIME) is run again with twice the time, up to three tries, and
# after that reported and passed over: it is not a finding. A real finding
# stops the run: go has written the input under the package's
# testdata/fuzz/FuzzXxx/; fix the bug and commit that file with the fix.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
SINCE=${SINCE:-}
RUN=${RUN:-}
KEEP=${KEEP:-0}

die() { echo "fuzz: $*" >&2; exit 2; }

if [[ ! $FUZZTIME =~ ^[0-9]+(s|m|x)$ ]]; then
  die "FUZZTIME=$FUZZTIME: expected a whole number of seconds, minutes or runs such as 10s, 2m or 500x"
fi
[[ $KEEP =~ ^[0-9]+$ ]] && [ "$KEEP" -le 1000 ] || die "KEEP=$KEEP: expected a whole number of inputs from 0 to 1000"
if [ -n "$RUN" ]; then
  rc=0
  printf '' | grep -E -- "$RUN" >/dev/null 2>&1 || rc=$?
  [ "$rc" -ne 2 ] || die "RUN=$RUN is not a valid extended regular expression"
fi

# targets prints "dir function" for every fuzz target of the module.
targets() {
  git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | sort | while read -r f; do
    sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f" | while read -r fn; do
      echo "$(dirname "$f") $fn"
    done
  done
}

# changed_dirs prints the package directory of every file changed since $1,
# testdata below a package counting as that package.
changed_dirs() {
  { git diff --name-only "$1" --; git ls-files --others --exclude-standard; } |
    sed -e 's#/testdata/.*##' -e 's#/[^/]*$##' -e 's#^[^/]*$#.#' | sort -u
}

selected=$(targets)
if [ -n "$SINCE" ]; then
  git rev-parse --verify --quiet "$SINCE^{commit}" >/dev/null || die "SINCE=$SINCE: not a commit git knows"
  module=$("$GO" list -m)
  changed=$(changed_dirs "$SINCE")
  keep=""
  for dir in $(echo "$selected" | awk '{print $1}' | sort -u); do
    # The package's own directory and those of the module's packages it imports.
    deps=$("$GO" list -deps -test -f '{{.ImportPath}}' "./$dir" | sed -n "s#^$module\$#.#p; s#^$module/##p" | sed 's/ .*//; s/\.test$//; s/_test$//' | sort -u)
    if comm -12 <(echo "$deps") <(echo "$changed") | grep -q .; then
      keep+="$dir"$'\n'
    fi
  done
  selected=$(echo "$selected" | while read -r dir fn; do
    if grep -qxF "$dir" <<<"$keep"; then echo "$dir $fn"; fi
  done)
  echo "fuzz: $(echo "$selected" | grep -c . || true) targets in packages changed since $SINCE (or importing one)"
fi
if [ -n "$RUN" ]; then
  selected=$(echo "$selected" | while read -r dir fn; do
    if [[ -n $fn ]] && echo "$fn" | grep -qE -- "$RUN"; then echo "$dir $fn"; fi
  done)
fi
if [ -z "$(echo "$selected" | tr -d '[:space:]')" ]; then
  echo "fuzz: no target to run"
  exit 0
fi

# keep DIR FN copies up to KEEP of the newest cached interesting inputs of
# the target into its committed corpus.
keep() {
  [ "$KEEP" -gt 0 ] || return 0
  local cache dest n=0 f
  cache="$("$GO" env GOCACHE)/fuzz/$("$GO" list "./$1")/$2"
  dest="$1/testdata/fuzz/$2"
  [ -d "$cache" ] || return 0
  mkdir -p "$dest"
  for f in $(ls -t "$cache"); do
    [ "$n" -lt "$KEEP" ] || break
    if [ ! -e "$dest/$f" ]; then cp "$cache/$f" "$dest/$f"; n=$((n + 1)); fi
  done
  echo "fuzz: kept $n new inputs of $2 in $dest (commit them)"
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
while read -r dir fn; do
  [ -n "$fn" ] || continue
  t=$FUZZTIME
  for try in 1 2 3; do
    echo "fuzz: $fn in ./$dir ($t)"
    if "$GO" test -run '^$' -fuzz "^$fn\$" -fuzztime "$t" "./$dir" >"$out" 2>&1; then
      cat "$out"
      keep "$dir" "$fn"
      break
    fi
    cat "$out"
    if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
      if [ "$try" = 3 ]; then
        echo "fuzz: $fn stopped on the engine's deadline three times, never on an input: not a finding; going on"
        break
      fi
      if [[ $t =~ ^[0-9]+s$ ]]; then t="$(( ${t%s} * 2 ))s"; fi
      echo "fuzz: $fn stopped on the engine's deadline, not on an input; running it again for $t"
      continue
    fi
    echo "fuzz: $fn found a failing input: fix the bug, then commit the file go wrote under ./$dir/testdata/fuzz/$fn/ with the fix" >&2
    exit 1
  done
done <<<"$selected"
