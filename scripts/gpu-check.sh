#!/usr/bin/env bash
# GPU checks and benchmarks; runs on the GPU machine (docs/GPU.md).
#
# Build here first: scripts/build-gpu-bundle.sh (and, for an A/B of two
# builds, scripts/build-gpu-bundle.sh --ref <commit> --out .gpu/base). Then,
# through the device tool with carry [".gpu"] (plus ".anchors" for DeepGEMM):
#   scripts/gpu-run.sh <verb> [limit-seconds] [...]   (everything back as $OUT/gpu-out.tgz)
#   scripts/gpu-check.sh <verb> [<verb> ...]
#
# Verbs:
#   smoke     one GEMM and one cast checked; SASS sanity (QGMMA present, no LDL/STL)
#   sweep     every GEMM correctness case (forms, tails, K % 128 != 0, M = 1..129,
#             every tile, split-K through the workspace and in clusters, CTA pairs),
#             each kernel compiled with --debug=hang; JOBS cases at a time
#   casts     every cast checked bit-exact (layouts, tails, f32 inputs); JOBS at a time
#   wheel     the wheel in dist/ installed into a scratch folder: python -m blockscale
#   python    pytest test/gpu
#   bench     bench/bench_gemm.py, full run (DeepGEMM beside when .anchors/ holds its
#             archive), then bench/bench_quant.py
#   jit       build/bin/blockscale-bench-jit (JIT latency from a cold cache)
#   linear    bench/bench_linear.py --graph, bench/bench_inference.py --graph
#   ab [FILE] [bench/ab.py flags...]
#             same-process A/B of builds (bench/ab.py; FILE default bench/variants/rebuild.txt),
#             GEMM targets and casts, two rounds; takes the rest of the line
#   multigpu  sharded programs (--simulate, NCCL where enough GPUs) and the toy parity runs
#   all       smoke sweep casts python bench (longer than one 10-minute device call)
# Logs go to $OUT (default ./gpu-out): check.log, failures.log, JSON.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
GEN=build/bin/blockscale-gen
export BLOCKSCALE_CACHE_DIR=${BLOCKSCALE_CACHE_DIR:-/tmp/blockscale-cache}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

FAILS=0
log() { echo "$*" | tee -a "$OUT/check.log"; }
fail() { log "FAILED: $*"; echo "$*" >> "$OUT/failures.log"; FAILS=$((FAILS + 1)); }
run() { # run <timeout-s> <command...>: logged; a non-zero exit counts as a failure
  local t=$1 rc; shift
  log "+ $*"
  timeout "$t" "$@" 2>&1 | tee -a "$OUT/check.log"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || fail "rc=$rc: $*"
  return "$rc"
}

# The bundles of scripts/build-gpu-bundle.sh, unpacked where they were packed
# (build/bin, build/lib, .gpu/base, ...): the archives carried are what runs.
unpack_bundles() {
  local a
  for a in .gpu/*.tar.xz; do
    [ -e "$a" ] || continue
    [ "$a.unpacked" -nt "$a" ] && continue  # (by an earlier run on this machine)
    tar -xJf "$a" || { echo "gpu-check: cannot unpack $a" >&2; exit 2; }
    touch "$a.unpacked"
    log "unpacked $a"
  done
  [ -x "$GEN" ] || { echo "gpu-check: no $GEN (scripts/build-gpu-bundle.sh, carry .gpu)" >&2; exit 2; }
}

# NVRTC: the toolkit's, else the wheel that PyTorch ships.
if [ ! -e /usr/local/cuda/lib64/libnvrtc.so.13 ]; then
  w=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null)
  [ -n "$w" ] && export LD_LIBRARY_PATH=$(dirname "$(find "$w" -name 'libnvrtc.so.13' | head -1)"):${LD_LIBRARY_PATH:-}
fi

# DeepGEMM (issue 28's anchor; never part of the project), set up as the
# anchors' README says when its archive was copied into .anchors/ and carried.
setup_deepgemm() {
  local a dg=/tmp/deepgemm
  a=$(ls .anchors/deepgemm-*.tar.xz 2>/dev/null | head -1)
  if [ -z "$a" ]; then log "DeepGEMM: no .anchors/deepgemm-*.tar.xz; its columns are left out"; return 0; fi
  [ -d "$dg" ] || tar -xJf "$a" -C /tmp || { fail "DeepGEMM: cannot unpack $a"; return 1; }
  cp "$dg"/prebuilt/_C*.so "$dg/deep_gemm/"
  ln -sfn ../../third-party/cutlass/include/cutlass "$dg/deep_gemm/include/cutlass"
  ln -sfn ../../third-party/cutlass/include/cute "$dg/deep_gemm/include/cute"
  export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH DG_JIT_CACHE_DIR=/tmp/dgjit
  export PYTHONPATH=$PYTHONPATH:$dg
  python3 -c 'import deep_gemm; print("DeepGEMM", deep_gemm.__version__)' 2>&1 | tee -a "$OUT/check.log" ||
    fail "DeepGEMM: $a unpacked but deep_gemm does not import"
}

# SASS of the planner's kernel for M N K: QGMMA present, no local memory (spills).
sass_check() {
  local cub="$OUT/sass/gemm_$1x$2x$3.cubin" cod q l
  mkdir -p "$OUT/sass"
  run 120 "$GEN" --m "$1" --n "$2" --k "$3" --emit cubin -o "$cub" || return
  cod=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  "$cod" --dump-sass "$cub" > "${cub%.cubin}.sass" 2>&1
  q=$(grep -c QGMMA "${cub%.cubin}.sass")
  l=$(grep -cE '\b(LDL|STL)\b' "${cub%.cubin}.sass")
  log "SASS $1x$2x$3: $q QGMMA, $l LDL/STL"
  [ "$q" -gt 0 ] && [ "$l" = 0 ] || fail "SASS $1x$2x$3: expected QGMMA and no LDL/STL"
}

# Correctness cases are independent: queued, then run JOBS at a time (the GPU
# is shared; nothing here is timed), each logged to its own file.
JOBS=${JOBS:-$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))}
QUEUE=
g() { enqueue "$GEN" --run --debug=hang --iters 0 "$@"; }         # one GEMM, checked
cast() { enqueue "$GEN" --op quantize --run --iters 0 "$@"; }      # one cast, bit-exact
enqueue() { printf '%q ' timeout 180 "$@" >> "$QUEUE"; echo >> "$QUEUE"; }
run_queued() { # run_queued <name> <function>: the function's cases, JOBS at a time
  local d="$OUT/$1" n i rc
  mkdir -p "$d"; QUEUE="$d/cases"; : > "$QUEUE"; "$2"
  n=$(wc -l < "$QUEUE"); log "$1: $n cases, $JOBS at a time"
  i=0; while IFS= read -r c; do
    i=$((i + 1))
    ( echo "+ $c"; bash -c "$c" 2>&1; echo "rc=$?" ) > "$d/$i.log" &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  done < "$QUEUE"
  wait
  for i in $(seq 1 "$n"); do
    cat "$d/$i.log" >> "$OUT/check.log"
    rc=$(sed -n 's/^rc=//p' "$d/$i.log" | tail -1)
    [ "$rc" = 0 ] || fail "rc=$rc: $(sed -n 1p "$d/$i.log")"
  done
  log "$1: $(grep -l '^rc=0$' "$d"/*.log | wc -l) of $n passed"
  tar -C "$OUT" -czf "$OUT/$1.tgz" "$1" && rm -rf "$d"
}

v_smoke() {
  run 120 "$GEN" --run --debug=hang --iters 0 --m 512 --n 2112 --k 7168
  run 120 "$GEN" --op quantize --run --iters 0 --rows 1008 --cols 2112 --recipe 128x1 --col-major
  sass_check 4096 7168 16384  # 256x128 tiles in CTA pairs
  sass_check 128 2112 7168    # splits summed in a cluster
}

v_sweep() { run_queued sweep sweep_cases; }
sweep_cases() {
  local t f
  # The default shape, tails in every dimension, M = 1 and 129, K % 128 != 0,
  # split-K, each form and output, e5m2.
  g --m 512 --n 2112 --k 7168
  g --m 77 --n 200 --k 7008
  g --m 1 --n 256 --k 128
  g --m 300 --n 2112 --k 1040
  g --m 128 --n 2112 --k 7168
  g --m 129 --n 1000 --k 4096 --force-tile splits=3
  g --m 1000 --n 4096 --k 2048 --form dgrad
  g --m 1024 --n 4096 --k 2048 --form wgrad
  g --m 333 --n 520 --k 1008 --form wgrad
  g --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate
  g --m 256 --n 384 --k 1024 --out-dtype f32
  g --m 256 --n 384 --k 1024 --a-type e5m2
  # Every tile width, fwd and wgrad, with tails.
  for t in bm=64,bn=16 bm=64,bn=192 bm=128,bn=48 bm=128,bn=80 bm=128,bn=96 bm=128,bn=112 \
           bm=128,bn=144 bm=128,bn=160 bm=128,bn=192 bm=128,bn=128,stages=2 bm=256,bn=128 bm=256,bn=112; do
    g --m 700 --n 1040 --k 2944 --force-tile $t
    g --m 700 --n 1040 --k 2944 --force-tile $t --form wgrad
  done
  # 256-row tiles (two waves per consumer warpgroup): tails, f32 +=, split-K,
  # turn-taking from 32 K-blocks (alone, and 65 K-blocks in 2 splits).
  g --m 300 --n 2112 --k 1040 --force-tile bm=256,bn=128
  g --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=256,bn=64
  g --m 129 --n 1000 --k 4096 --force-tile bm=256,bn=64,splits=3
  g --m 700 --n 1040 --k 4224 --force-tile bm=256,bn=128
  g --m 129 --n 1000 --k 8320 --force-tile bm=256,bn=64,splits=2
  # CTA pairs sharing A: as the planner picks them (odd N-tile count, dgrad),
  # forced for every form, f32 and C +=.
  g --m 4000 --n 3968 --k 4000
  g --m 4000 --n 3968 --k 4000 --form dgrad
  for f in fwd wgrad; do g --m 700 --n 1040 --k 2944 --force-tile bm=256,bn=128,cluster=2 --form $f; done
  g --m 300 --n 2112 --k 1040 --force-tile bm=256,bn=128,cluster=2 --form dgrad
  g --m 300 --n 2112 --k 1024 --force-tile bm=256,bn=128,cluster=2
  g --m 1000 --n 1040 --k 2944 --force-tile bm=256,bn=64,cluster=2 --out-dtype f32
  g --m 512 --n 1024 --k 1024 --force-tile bm=256,bn=64,cluster=2 --form wgrad --out-dtype f32 --accumulate
  for t in bm=128,bn=128,cluster=2 bm=128,bn=192,cluster=2 bm=64,bn=128,cluster=2 \
           bm=128,bn=144,cluster=2 bm=128,bn=64,cluster=2,splits=3; do
    g --m 700 --n 1040 --k 2944 --force-tile $t
    g --m 700 --n 1040 --k 2944 --force-tile $t --form wgrad
  done
  g --m 300 --n 2112 --k 1024 --force-tile bm=128,bn=192,cluster=2
  g --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=128,bn=128,cluster=2
  # Splits summed in a cluster: tails, waves, wgrad f32 +=, more units than
  # resident clusters, 2 to 8 CTAs per cluster.
  g --m 77 --n 200 --k 7008 --force-tile bm=128,bn=64,splits=4,ksplit=4
  g --m 129 --n 1000 --k 4096 --force-tile bm=128,bn=128,splits=3,ksplit=3
  g --m 100 --n 520 --k 1008 --force-tile bm=64,bn=128,splits=3,ksplit=3
  g --m 300 --n 2112 --k 1040 --force-tile bm=256,bn=128,splits=2,ksplit=2
  g --m 333 --n 520 --k 1008 --form wgrad --force-tile bm=128,bn=96,splits=2,ksplit=2
  g --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=128,bn=64,splits=2,ksplit=2
  g --m 256 --n 384 --k 1024 --out-dtype f32 --force-tile bm=128,bn=48,splits=2,ksplit=2
  g --m 2048 --n 2048 --k 2048 --force-tile bm=128,bn=128,splits=2,ksplit=2
  g --m 1024 --n 2112 --k 4096 --force-tile bm=128,bn=64,splits=4,ksplit=4
  g --m 128 --n 2112 --k 7168 --force-tile bm=128,bn=144,splits=8,ksplit=8
  g --m 128 --n 2112 --k 7168 --force-tile bm=128,bn=128,splits=6,ksplit=6
  g --m 128 --n 7168 --k 16384 --force-tile bm=128,bn=112,splits=2,ksplit=2
}

v_casts() { run_queued casts cast_cases; }
cast_cases() {
  local r f dt
  for r in 1x128 128x1 128x128; do
    for f in "" "--transpose" "--col-major" "--transpose --col-major"; do
      cast --rows 1008 --cols 2112 --recipe $r $f
    done
  done
  cast --rows 4096 --cols 7168 --recipe 1x128 --in-dtype f32
  cast --rows 4096 --cols 7168 --recipe 128x1 --col-major --in-dtype f32
  # Transposed results: tails in both dimensions, a single partial tile.
  for dt in bf16 f32; do
    cast --rows 4096 --cols 7168 --recipe 1x128 --transpose --in-dtype $dt
    cast --rows 2064 --cols 4104 --recipe 128x128 --col-major --in-dtype $dt
  done
  cast --rows 16 --cols 24 --recipe 128x1 --col-major
}

v_python() { run 600 python3 -m pytest -x -q -p no:cacheprovider test/gpu -s; }

v_bench() {
  setup_deepgemm
  run 560 python3 bench/bench_gemm.py --json "$OUT/bench_gemm.json"
  run 300 python3 bench/bench_quant.py --json "$OUT/bench_quant.json"
}

v_wheel() { # the package as a user installs it: no MLIR here, NVRTC found at run time
  local w t=/tmp/bs-wheel
  w=$(ls dist/blockscale-*.whl 2>/dev/null | head -1)
  [ -n "$w" ] || { fail "wheel: no dist/blockscale-*.whl (build it and carry dist)"; return; }
  rm -rf "$t"
  run 120 python3 -m pip install -q --no-deps --no-index --target "$t" "$w" || return
  (cd /tmp && run 120 env -u PYTHONPATH PYTHONPATH="$t" python3 -m blockscale)
}

v_jit() {  # (a fresh cache directory, so that "cold" really compiles)
  run 300 env -u BLOCKSCALE_CACHE_DIR build/bin/blockscale-bench-jit --json "$OUT/bench_jit.json"
}
v_linear() {
  run 400 python3 bench/bench_linear.py --graph
  run 300 python3 bench/bench_inference.py --graph
}

v_ab() { # [FILE] [flags]: FILE is a variants file unless it starts with '-'
  local file=bench/variants/rebuild.txt
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then file=$1; shift; fi
  run 560 python3 bench/ab.py --variants "$file" --rounds 2 --casts --json "$OUT/ab.json" "$@"
}

v_multigpu() {
  local RS=build/bin/blockscale-run-sharded ngpu f world a m
  ngpu=$(nvidia-smi -L | wc -l)
  # Every rank of each grid on this GPU with host collectives (--simulate),
  # then the real per-process NCCL run where the machine has enough GPUs.
  for f in test/gpu/sharded/*.mlir test/tools/blockscale-run-sharded/*.mlir; do
    grep -q 'RUN: not' "$f" && continue  # programs the tool must refuse
    run 300 $RS "$f" --simulate --check
    world=$(( $($RS "$f" --plan-only | sed -n 's/^grid //p' | tr 'x' '*') ))
    if [ "$world" -le "$ngpu" ]; then run 300 $RS "$f" --check
    else log "skip NCCL run of $f: grid of $world devices, $ngpu GPU(s) here"; fi
  done
  # ToyModel FFN parity (TP, FSDP2, both) against the unsharded FP8 model;
  # the 1x1 mesh runs the same code paths on one GPU.
  local TR="python3 -m torch.distributed.run --standalone"
  for a in tp fsdp both; do run 300 $TR --nproc-per-node 1 test/gpu/multigpu/toy_parity.py --dp 1 --tp 1 --apply $a; done
  for m in "1 2" "2 1" "2 2"; do
    set -- $m
    if [ $(($1 * $2)) -le "$ngpu" ]; then
      run 300 $TR --nproc-per-node $(($1 * $2)) test/gpu/multigpu/toy_parity.py --dp $1 --tp $2
    else log "skip toy parity dp=$1 tp=$2: $ngpu GPU(s) here"; fi
  done
}

[ $# -gt 0 ] || { usage; exit 2; }
for v in "$@"; do  # every verb known before any device time is spent
  case $v in
    smoke|sweep|casts|wheel|python|bench|jit|linear|multigpu|all) ;;
    ab) break ;;
    *) echo "gpu-check: unknown verb '$v'" >&2; usage >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
unpack_bundles
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee -a "$OUT/check.log"
verbs="$*"
while [ $# -gt 0 ]; do
  v=$1; shift
  log "=== $v"
  case $v in
    ab) v_ab "$@"; set -- ;;
    all) v_smoke; v_sweep; v_casts; v_python; v_bench ;;
    *) "v_$v" ;;
  esac
done
log "gpu-check $verbs: $FAILS failure(s)"
[ "$FAILS" = 0 ]
