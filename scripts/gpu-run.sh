#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Wraps scripts/gpu-check.sh for the device tool, which brings back only a
# few files from $OUT: the verbs run with their logs in a scratch folder under
# a time limit, and everything comes back as one $OUT/gpu-out.tgz (plus
# check.log's last lines on stdout).
#   scripts/gpu-run.sh <verb> [limit-seconds, default 540] [more verbs | ab's arguments]
# e.g. scripts/gpu-run.sh smoke 540 casts;  scripts/gpu-run.sh ab 560 --no-casts
set -u
cd "$(dirname "$0")/.."
: "${OUT:?run through the device tool (OUT is its result folder)}"
[ $# -gt 0 ] || { sed -n '2,7p' "$0"; exit 2; }
verb=$1; shift
limit=540
if [[ ${1:-} =~ ^[0-9]+$ ]]; then limit=$1; shift; fi
work="$OUT/.work"
mkdir -p "$work"
OUT="$work" timeout "$limit" bash scripts/gpu-check.sh "$verb" "$@" > "$work/stdout.log" 2>&1
rc=$?
echo "gpu-check $verb${*:+ $*}: exit $rc" >> "$work/stdout.log"
tar czf "$OUT/gpu-out.tgz" -C "$work" .
tail -n 25 "$work/stdout.log"
rm -rf "$work"
exit $rc
