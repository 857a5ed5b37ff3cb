#!/usr/bin/env bash
# Wraps scripts/gpu-check.sh for the device tool, which brings back only a
# few files from $OUT: the mode runs with its logs in a scratch folder under
# a time limit, and everything comes back as one $OUT/gpu-out.tgz (plus
# check.log's last lines on stdout).
#   scripts/gpu-run.sh <mode> [limit-seconds, default 540]
set -u
cd "$(dirname "$0")/.."
: "${OUT:?run through the device tool (OUT is its result folder)}"
work="$OUT/.work"
mkdir -p "$work"
OUT="$work" timeout "${2:-540}" bash scripts/gpu-check.sh "$1" > "$work/stdout.log" 2>&1
rc=$?
echo "gpu-check $1: exit $rc" >> "$work/stdout.log"
tar czf "$OUT/gpu-out.tgz" -C "$work" .
tail -n 25 "$work/stdout.log"
rm -rf "$work"
exit $rc
