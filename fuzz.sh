#!/usr/bin/env bash
# Runs every fuzz target for a while and says how many inputs each ran.
#   ./fuzz.sh 4s           each target 4 s (what ./test.sh does)
#   ./fuzz.sh --release    every target, 10 minutes in all at least (600 s
#                          split evenly, 10 s each at least), then the
#                          inputs the fuzzer kept are copied into each
#                          package's testdata/fuzz/TARGET/, where plain
#                          `go test` runs them as seeds: commit them.
# FUZZFLOOR (default 200): a target that runs fewer new inputs than this
# (beyond the baseline over its corpus) gets twice the time once, then
# fails the run: it did not fuzz.
# FUZZMINIMIZE (default 1x, 100x with --release): -fuzzminimizetime, the
# work spent shrinking each input that finds new coverage. Go's default,
# 60 s, let a target spend a short run minimizing (FuzzJudge: 14 inputs in
# 15 s); a failing input is still written, unshrunk.
# A failing input is written to testdata/fuzz/ by go test itself and the
# script stops with the failure.
set -euo pipefail
cd "$(dirname "$0")"

release=0
per=${1:-4s}
floor=${FUZZFLOOR:-200}
minimize=${FUZZMINIMIZE:-1x}
targets=()
for pkg in $(go list ./...); do
	for t in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		targets+=("$pkg $t")
	done
done
if [ "$per" = --release ]; then
	release=1
	minimize=${FUZZMINIMIZE:-100x}
	n=${#targets[@]}
	secs=$(((600 + n - 1) / n))
	[ "$secs" -lt 10 ] && secs=10
	per=${secs}s
	echo "release fuzzing: ${n} targets × ${per} = $((n * secs)) s"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cache=$(go env GOCACHE)/fuzz

# fuzz PKG TARGET TIME runs one target and sets execs (inputs run) and
# fuzzed (those beyond the baseline over the corpus, which a starting
# target runs first).
fuzz() {
	if ! go test -run '^$' -fuzz "^${2}\$" -fuzztime "$3" -fuzzminimizetime "$minimize" "$1" >"$log" 2>&1; then
		# go1.26's fuzz coordinator can end a timed run with a bare
		# "context deadline exceeded" and no input (go.dev/issue/75804,
		# fixed in go1.27): that is no finding. Anything else is.
		if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
			echo "  (go.dev/issue/75804 at the deadline; no failing input)"
		else
			cat "$log"
			exit 1
		fi
	fi
	# The coordinator's status lines: "fuzz: elapsed: 0s, gathering
	# baseline coverage: 0/87 completed" and, last, "fuzz: elapsed: 4s,
	# execs: 12345 (3086/sec), new interesting: ...".
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	execs=${execs:-0}
	local base
	base=$(grep -o 'baseline coverage: [0-9]*/[0-9]*' "$log" | tail -1 | cut -d/ -f2)
	fuzzed=$((execs - ${base:-0}))
	[ "$fuzzed" -lt 0 ] && fuzzed=0
	return 0
}

starved=()
for entry in "${targets[@]}"; do
	read -r pkg target <<<"$entry"
	fuzz "$pkg" "$target" "$per"
	# A target still starting when its time is up (its workers, the
	# baseline: seconds on a loaded machine) gets twice the time once.
	if [ "$fuzzed" -lt "$floor" ]; then
		again=$per
		[[ $per =~ ^([0-9]+)s$ ]] && again=$((BASH_REMATCH[1] * 2))s
		echo "  $target: $fuzzed new inputs in $per; again for $again"
		fuzz "$pkg" "$target" "$again"
	fi
	printf 'fuzz %-45s %-28s %9d inputs, %9d beyond the corpus\n' "$pkg" "$target" "$execs" "$fuzzed"
	if [ "$fuzzed" -lt "$floor" ]; then
		starved+=("$pkg $target ($fuzzed)")
	fi
	if [ "$release" = 1 ] && [ -d "$cache/$pkg/$target" ]; then
		dir=$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target
		mkdir -p "$dir"
		cp -n "$cache/$pkg/$target"/* "$dir"/ 2>/dev/null || true
		echo "  corpus: $(ls "$dir" | wc -l) inputs in ${dir#"$PWD"/}"
	fi
done
if [ ${#starved[@]} -gt 0 ]; then
	echo "fewer than $floor new inputs (FUZZFLOOR), also at twice the time: these targets did not fuzz:"
	printf '  %s\n' "${starved[@]}"
	exit 1
fi
