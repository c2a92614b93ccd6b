#!/usr/bin/env bash
# Profiles the server while it runs bench workloads: a CPU profile and a sampling heap profile of
# every thread (main and pool), written to OUT (default ./profiles/<time>), each summarised.
# Usage: bench/profile.sh [workload ...]   (default: latency chain throughput)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-profiles/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(latency chain throughput)
npm run build --silent
for workload in "${workloads[@]}"; do
  dir="$OUT/$workload"
  mkdir -p "$dir"
  TROUPE_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=$dir --heap-prof --heap-prof-dir=$dir" \
    node --import tsx bench/run.ts "$workload" | tee "$dir/bench.jsonl"
  for profile in "$dir"/*.cpuprofile "$dir"/*.heapprofile; do
    [ -e "$profile" ] || continue
    node bench/profile-summary.mjs "$profile" 30 > "$profile.txt"
  done
  echo "$workload: profiles and summaries in $dir"
done
