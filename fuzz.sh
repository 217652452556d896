#!/usr/bin/env bash
# Runs every fuzz target for a while.
#   ./fuzz.sh 4s           each target 4 s (what ./test.sh does)
#   ./fuzz.sh --release    every target, 10 minutes in all at least (600 s
#                          split evenly, 10 s each at least), then the
#                          inputs the fuzzer kept are copied into each
#                          package's testdata/fuzz/TARGET/, where plain
#                          `go test` runs them as seeds: commit them.
# A failing input is written to testdata/fuzz/ by go test itself and the
# script stops with the failure.
set -euo pipefail
cd "$(dirname "$0")"

release=0
per=${1:-4s}
targets=()
for pkg in $(go list ./...); do
	for t in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		targets+=("$pkg $t")
	done
done
if [ "$per" = --release ]; then
	release=1
	n=${#targets[@]}
	secs=$(((600 + n - 1) / n))
	[ "$secs" -lt 10 ] && secs=10
	per=${secs}s
	echo "release fuzzing: ${n} targets × ${per} = $((n * secs)) s"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cache=$(go env GOCACHE)/fuzz
for entry in "${targets[@]}"; do
	read -r pkg target <<<"$entry"
	echo "fuzz $pkg $target ($per)"
	if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$per" "$pkg" >"$log" 2>&1; then
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
	if [ "$release" = 1 ] && [ -d "$cache/$pkg/$target" ]; then
		dir=$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target
		mkdir -p "$dir"
		cp -n "$cache/$pkg/$target"/* "$dir"/ 2>/dev/null || true
		echo "  corpus: $(ls "$dir" | wc -l) inputs in ${dir#"$PWD"/}"
	fi
done
