#!/usr/bin/env bash
# Runs on the GPU machine (see docs/GPU.md). Build here first:
#   scripts/build-gpu-bundle.sh        (fills build/bin and build/lib)
# then, through the device tool, with carry = ["build/bin", "build/lib"]:
#   scripts/gpu-check.sh [smoke|sweep|quant|bench|python|all]
# Logs go to $OUT (or ./gpu-out) so that they come back.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
GEN=build/bin/blockscale-gen
export BLOCKSCALE_CACHE_DIR=${BLOCKSCALE_CACHE_DIR:-/tmp/blockscale-cache}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# NVRTC: the toolkit's, else the wheel that PyTorch ships.
if [ ! -e /usr/local/cuda/lib64/libnvrtc.so.13 ]; then
  w=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__))' 2>/dev/null)
  [ -n "$w" ] && export LD_LIBRARY_PATH=$(dirname "$(find "$w" -name 'libnvrtc.so.13' | head -1)"):${LD_LIBRARY_PATH:-}
fi

FAILS=0
run() { # run <timeout-s> <command...>: log, count failures
  local t=$1; shift
  echo "+ $*" | tee -a "$OUT/check.log"
  timeout "$t" "$@" 2>&1 | tee -a "$OUT/check.log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" != 0 ]; then echo "FAILED rc=$rc: $*" | tee -a "$OUT/failures.log"; FAILS=$((FAILS+1)); fi
}

# Nsight Compute: on the PATH, else the newest install under /opt; empty
# when there is none.
find_ncu() {
  command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1
}

# SASS of a cubin beside it (x.cubin -> x.sass): cuobjdump on the PATH, else
# the toolkit's.
dump_sass() {
  local cod
  cod=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  "$cod" --dump-sass "$1" > "${1%.cubin}.sass" 2>&1
}

gemm_sweep() {
  local dbg=--debug-hang
  # default shape, tails in every dimension, small M, split-K, each form.
  run 120 $GEN --run $dbg --iters 0 --m 512 --n 2112 --k 7168
  run 120 $GEN --run $dbg --iters 0 --m 77 --n 200 --k 7008
  run 120 $GEN --run $dbg --iters 0 --m 1 --n 256 --k 128
  run 120 $GEN --run $dbg --iters 0 --m 300 --n 2112 --k 1040
  run 120 $GEN --run $dbg --iters 0 --m 128 --n 2112 --k 7168
  run 120 $GEN --run $dbg --iters 0 --m 129 --n 1000 --k 4096 --force-tile splits=3
  run 120 $GEN --run $dbg --iters 0 --m 1000 --n 4096 --k 2048 --form dgrad
  run 120 $GEN --run $dbg --iters 0 --m 1024 --n 4096 --k 2048 --form wgrad
  run 120 $GEN --run $dbg --iters 0 --m 333 --n 520 --k 1008 --form wgrad
  run 120 $GEN --run $dbg --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate
  run 120 $GEN --run $dbg --iters 0 --m 256 --n 384 --k 1024 --out-dtype f32
  run 120 $GEN --run $dbg --iters 0 --m 256 --n 384 --k 1024 --a-type e5m2
  for t in bm=64,bn=16 bm=64,bn=192 bm=128,bn=48 bm=128,bn=80 bm=128,bn=96 \
           bm=128,bn=144 bm=128,bn=160 bm=128,bn=192 bm=128,bn=128,stages=2; do
    run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t
    run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t --form wgrad
  done
  ksplit_sweep
}

# Splits summed in a cluster (ksplit, twelfth session): tails, waves, wgrad
# f32 +=, a unit count above the clusters resident (several units per
# cluster, so the ready/freed phases turn over), 3 to 8 CTAs per cluster.
ksplit_sweep() {
  local dbg=--debug-hang
  run 120 $GEN --run $dbg --iters 0 --m 77 --n 200 --k 7008 --force-tile bm=128,bn=64,splits=4,ksplit=4
  run 120 $GEN --run $dbg --iters 0 --m 129 --n 1000 --k 4096 --force-tile bm=128,bn=128,splits=3,ksplit=3
  run 120 $GEN --run $dbg --iters 0 --m 100 --n 520 --k 1008 --force-tile bm=64,bn=128,splits=3,ksplit=3
  run 120 $GEN --run $dbg --iters 0 --m 300 --n 2112 --k 1040 --force-tile bm=256,bn=128,splits=2,ksplit=2
  run 120 $GEN --run $dbg --iters 0 --m 333 --n 520 --k 1008 --form wgrad --force-tile bm=128,bn=96,splits=2,ksplit=2
  run 120 $GEN --run $dbg --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=128,bn=64,splits=2,ksplit=2
  run 120 $GEN --run $dbg --iters 0 --m 256 --n 384 --k 1024 --out-dtype f32 --force-tile bm=128,bn=48,splits=2,ksplit=2
  run 120 $GEN --run $dbg --iters 0 --m 2048 --n 2048 --k 2048 --force-tile bm=128,bn=128,splits=2,ksplit=2
  run 120 $GEN --run $dbg --iters 0 --m 1024 --n 2112 --k 4096 --force-tile bm=128,bn=64,splits=4,ksplit=4
  run 120 $GEN --run $dbg --iters 0 --m 128 --n 2112 --k 7168 --force-tile bm=128,bn=144,splits=8,ksplit=8
  run 120 $GEN --run $dbg --iters 0 --m 128 --n 2112 --k 7168 --force-tile bm=128,bn=128,splits=6,ksplit=6
  run 120 $GEN --run $dbg --iters 0 --m 128 --n 7168 --k 16384 --force-tile bm=128,bn=112,splits=2,ksplit=2
}

# The shapes whose tile the ksplit planner changed (twelfth session), the
# new choice against the old one forced (shape%tile).
changed12() {
  AB_DEFINES="" AB_ROUNDS=2 AB_SHAPES=1x2112x7168,16x4096x7168,64x2112x7168,128x576x7168,128x1536x7168,256x2112x7168,512x4096x7168,512x2112x7168,256x7168x16384 \
    AB_TILES=";1x2112x7168%bm=64,bn=192,splits=12;16x4096x7168%bm=64,bn=192,splits=6;64x2112x7168%bm=64,bn=192,splits=12;128x576x7168%bm=128,bn=64,splits=12;128x1536x7168%bm=128,bn=96,splits=8;256x2112x7168%bm=128,bn=96,splits=3;512x4096x7168%bm=128,bn=128;512x2112x7168%bm=128,bn=192,splits=3;256x7168x16384%bm=256,bn=112,splits=2" ab_gemm
}

quant_sweep() {
  for r in 1x128 128x1 128x128; do
    for f in "" "--transpose" "--col-major" "--transpose --col-major"; do
      run 120 $GEN --op quantize --run --iters 0 --rows 1008 --cols 2112 --recipe $r $f
    done
  done
  run 120 $GEN --op quantize --run --iters 0 --rows 4096 --cols 7168 --recipe 1x128 --in-dtype f32
  run 120 $GEN --op quantize --run --iters 0 --rows 4096 --cols 7168 --recipe 128x1 --col-major --in-dtype f32
  # transposed results: tails in both dimensions, a single partial tile,
  # the largest bench shape, each input type blockscale-gen can check
  for dt in bf16 f32; do
    run 120 $GEN --op quantize --run --iters 0 --rows 4096 --cols 7168 --recipe 1x128 --transpose --in-dtype $dt
    run 120 $GEN --op quantize --run --iters 0 --rows 2064 --cols 4104 --recipe 128x128 --col-major --in-dtype $dt
  done
  run 120 $GEN --op quantize --run --iters 0 --rows 16 --cols 24 --recipe 128x1 --col-major
  # (bench_quant.py checks the large shapes bit-exact too, faster)
  [ -n "${QUICK:-}" ] || run 120 $GEN --op quantize --run --iters 0 --rows 65536 --cols 8192 --recipe 128x1 --col-major
}

quant_bench() {
  run 200 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_quant.py --json "$OUT/bench_quant.json"
}

quick_time() {
  # Host data generation is slow for the largest shapes; bench/ times those.
  for s in "4096 7168 4096" "4096 32768 512" "128 2112 7168" "4096 2112 7168"; do
    set -- $s
    run 300 $GEN --run --iters 30 --check-rows 16 --m $1 --n $2 --k $3
  done
  run 300 $GEN --run --iters 30 --check-rows 16 --form wgrad --m 4096 --n 4096 --k 4096
  for r in "1x128" "128x1 --col-major" "1x128 --transpose" "128x128 --transpose --col-major" "128x128"; do
    run 120 $GEN --op quantize --run --iters 30 --rows 32768 --cols 4096 --recipe $r
  done
}

cluster_sweep() {
  local dbg=--debug-hang
  for t in bm=128,bn=128,cluster=2 bm=128,bn=192,cluster=2 bm=64,bn=128,cluster=2 \
           bm=128,bn=144,cluster=2 bm=128,bn=64,cluster=2,splits=3; do
    run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t
    run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t --form wgrad
  done
  # odd tile count along N (the pair's second tile is clipped away)
  run 120 $GEN --run $dbg --iters 0 --m 300 --n 2112 --k 1024 --force-tile bm=128,bn=192,cluster=2
  run 120 $GEN --run $dbg --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=128,bn=128,cluster=2
}

python_tests() {
  run 600 env PYTHONPATH=python python3 -m pytest -x -q -p no:cacheprovider test/gpu -s
}

VARIANTS=${VARIANTS:-"bm=128,bn=128;bm=128,bn=112;bm=128,bn=96;bm=128,bn=160;bm=128,bn=192;bm=128,bn=144;bm=128,bn=64;bm=64,bn=128;bm=64,bn=192;bm=128,bn=128,splits=2;bm=128,bn=64,splits=2;bm=128,bn=64,splits=4;bm=64,bn=128,splits=2;bm=64,bn=64,splits=4;bm=128,bn=128,raster=16;bm=128,bn=128,raster=4"}

full_bench() {
  run 900 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_gemm.py --json "$OUT/bench_gemm.json"
}

bench() {
  run 900 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_gemm.py --targets-only --variants "$VARIANTS" --json "$OUT/bench_gemm.json"
}

profile() {
  local NCU=$(find_ncu)
  [ -n "$NCU" ] || { echo "no ncu"; return; }
  for t in ${PROFILE_TILES:-bm=128,bn=128 bm=128,bn=192}; do
    timeout 300 "$NCU" --clock-control none -k regex:bs_gemm -c 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section LaunchStats \
      $GEN --run --iters 0 --check-rows 8 --m 4096 --n 7168 --k 4096 --force-tile $t \
      > "$OUT/ncu_${t//[=,]/_}.txt" 2>&1
    grep -E "Duration|Throughput|Pipe|L2|Stall|Issued|Eligible|Registers" "$OUT/ncu_${t//[=,]/_}.txt" | head -40
  done
}

# ncu on the casts: a transposing one beside one in input order (the
# reports are tarred: the device tool brings back only a few files).
profile_casts() {
  local NCU=$(find_ncu)
  [ -n "$NCU" ] || { echo "no ncu"; return; }
  local c
  for c in "t:128x1 --col-major" "plain:1x128"; do
    IFS=: read -r name r <<< "$c"
    timeout 300 "$NCU" --clock-control none -k regex:bs_quantize -c 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
      $GEN --op quantize --run --iters 0 --rows 32768 --cols 4096 --recipe $r \
      > "$OUT/ncu_cast_$name.txt" 2>&1
    grep -E "Duration|Throughput|Stall|Issued|Eligible|Registers|Bank|Occupancy" "$OUT/ncu_cast_$name.txt" | head -40
  done
  tar -C "$OUT" -czf "$OUT/ncu_casts.tgz" $(cd "$OUT" && ls ncu_cast_*.txt) && rm -f "$OUT"/ncu_cast_*.txt
}

other_benches() {
  run 300 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_quant.py --json "$OUT/bench_quant.json"
  run 300 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_linear.py
  # a fresh cache directory, so that "cold" really compiles
  run 300 env -u BLOCKSCALE_CACHE_DIR build/bin/blockscale-bench-jit --json "$OUT/bench_jit.json"
}

profile_source() {
  local NCU=$(find_ncu)
  [ -n "$NCU" ] || { echo "no ncu"; return; }
  timeout 300 "$NCU" --clock-control none -k regex:bs_gemm -c 1 --section WarpStateStats \
    --section SourceCounters --section SpeedOfLight \
    $GEN --run --iters 0 --check-rows 8 --m 4096 --n 7168 --k 4096 --force-tile ${PROFILE_TILE:-bm=128,bn=128} \
    > "$OUT/ncu_source.txt" 2>&1
  sed -n '/Warp Stall Sampling/,+40p' "$OUT/ncu_source.txt" | head -60
}

# What the consumers execute: SASS of the two main loops (bn 128 with the
# two-accumulator loop, bn 192 with the simple one) and ncu's instruction
# mix and stall sampling for each; everything tarred into $OUT.
inspect() {
  local NCU=$(find_ncu)
  local d="$OUT/inspect" t
  mkdir -p "$d"
  for t in 128 192; do
    $GEN --m 4096 --n 7168 --k 4096 --force-tile bm=128,bn=$t --emit cubin -o "$d/bn$t.cubin" 2>&1 | tail -1
    command -v cuobjdump >/dev/null && cuobjdump --dump-sass "$d/bn$t.cubin" > "$d/bn$t.sass" 2>&1
    # --print-details all: the stall reasons behind "no eligible warp" (not
    # in run 29's summary-only output).
    [ -n "$NCU" ] && timeout 120 "$NCU" --clock-control none -k regex:bs_gemm -c 1 \
      --print-details all \
      --section SpeedOfLight --section InstructionStats --section WarpStateStats \
      --section SchedulerStats --section SourceCounters \
      $GEN --run --iters 0 --check-rows 8 --m 4096 --n 7168 --k 4096 --force-tile bm=128,bn=$t \
      > "$d/ncu_bn$t.txt" 2>&1
    grep -E "Duration|Issued Ipc|Issue Slots|No Eligible|Warp Cycles Per Issued" "$d/ncu_bn$t.txt"
  done
  tar -C "$OUT" -czf "$OUT/inspect.tgz" inspect && rm -rf "$d"
}

sass() {
  $GEN --m 4096 --n 4096 --k 4096 --emit cubin -o "$OUT/gemm.cubin" 2>&1 | tee -a "$OUT/check.log"
  if command -v cuobjdump >/dev/null; then
    cuobjdump --dump-sass "$OUT/gemm.cubin" > "$OUT/gemm.sass" 2>&1
    echo "QGMMA: $(grep -c QGMMA "$OUT/gemm.sass")  LDL/STL: $(grep -cE 'LDL|STL' "$OUT/gemm.sass")" | tee -a "$OUT/check.log"
  fi
}

sharded() {
  # Every rank of each grid on this GPU with host collectives (--simulate),
  # then the real per-process NCCL run where the machine has enough GPUs.
  local RS=build/bin/blockscale-run-sharded
  local ngpu=$(nvidia-smi -L | wc -l)
  for f in test/gpu/sharded/*.mlir test/tools/blockscale-run-sharded/*.mlir; do
    # programs the tool must refuse (lit checks their errors) are not run
    grep -q 'RUN: not' "$f" && continue
    run 300 $RS "$f" --simulate --check
    local world=$(( $($RS "$f" --plan-only | sed -n 's/^grid //p' | tr 'x' '*') ))
    if [ "$world" -le "$ngpu" ]; then
      run 300 $RS "$f" --check
    else
      echo "skip NCCL run of $f: grid of $world devices, $ngpu GPU(s) here" | tee -a "$OUT/check.log"
    fi
  done
}

parity() {
  # ToyModel FFN parity (TP, FSDP2, both) against the unsharded FP8 model;
  # the 1x1 mesh runs the same code path on one GPU.
  local ngpu=$(nvidia-smi -L | wc -l)
  local TR="python3 -m torch.distributed.run --standalone"
  for a in tp fsdp both; do
    run 300 env PYTHONPATH=python $TR --nproc-per-node 1 test/gpu/multigpu/toy_parity.py --dp 1 --tp 1 --apply $a
  done
  for m in "1 2" "2 1" "2 2"; do
    set -- $m
    if [ $(($1 * $2)) -le "$ngpu" ]; then
      run 300 env PYTHONPATH=python $TR --nproc-per-node $(($1 * $2)) test/gpu/multigpu/toy_parity.py --dp $1 --tp $2
    else
      echo "skip toy parity dp=$1 tp=$2: $ngpu GPU(s) here" | tee -a "$OUT/check.log"
    fi
  done
}

# Where the GEMM time goes: the same kernel with the promotion removed
# (BS_EXP_NO_PROMOTE), with no operand loads (BS_EXP_NO_TMA) and both; the
# SASS of the kernel and ncu's per-instruction stall samples (gzipped: the
# CSV is too large to come back as is). Results of the experiments are
# wrong by construction (--no-check); only their times mean something.
explore() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 250 > "$OUT/clocks.csv" 2>&1 &
  local smi=$!
  local NCU=$(find_ncu)
  for s in "4096 7168 4096" "4096 4096 7168"; do
    set -- $s
    for t in "" "--force-tile bm=128,bn=192" "--force-tile bm=128,bn=128"; do
      for d in "" "--define BS_EXP_NO_PROMOTE" "--define BS_EXP_NO_TMA" "--define BS_EXP_NO_TMA --define BS_EXP_NO_PROMOTE"; do
        run 120 $GEN --run --no-check --iters 40 --m $1 --n $2 --k $3 $t $d
      done
    done
  done
  run 120 $GEN --run --iters 40 --check-rows 16 --m 4096 --n 7168 --k 4096
  $GEN --m 4096 --n 7168 --k 4096 --emit cubin -o "$OUT/gemm160.cubin"
  $GEN --m 4096 --n 7168 --k 4096 --force-tile bm=128,bn=128 --emit cubin -o "$OUT/gemm128.cubin"
  for c in gemm160 gemm128; do
    dump_sass "$OUT/$c.cubin"
  done
  if [ -n "$NCU" ]; then
    timeout 300 "$NCU" --clock-control none -k regex:bs_gemm -c 1 --section WarpStateStats \
      --section SourceCounters --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --page source --print-source sass --csv \
      $GEN --run --no-check --iters 0 --m 4096 --n 7168 --k 4096 2>&1 | gzip > "$OUT/ncu_sass160.csv.gz"
    timeout 300 "$NCU" --clock-control none -k regex:bs_gemm -c 1 --section WarpStateStats \
      --section SourceCounters --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      $GEN --run --no-check --iters 0 --m 4096 --n 7168 --k 4096 > "$OUT/ncu_details160.txt" 2>&1
  fi
  kill $smi
}

# FFMA yield interleave (SassPatch.h): the opcode test against cuobjdump,
# correctness with the edit on, then an A/B of the target shapes.
ffma_yield() {
  local D=BS_SASS_FFMA_YIELD=16
  for t in bm=128,bn=128 bm=128,bn=192 bm=128,bn=160; do
    $GEN --m 4096 --n 7168 --k 16384 --force-tile $t --emit cubin -o "$OUT/plain.cubin"
    $GEN --m 4096 --n 7168 --k 16384 --force-tile $t --emit cubin -o "$OUT/patched.cubin" --define $D
    run 60 python3 bench/sass_ffma_check.py "$OUT/plain.cubin" "$OUT/patched.cubin"
  done
  rm -f "$OUT/plain.cubin" "$OUT/patched.cubin"
  EXP_DEFINES=$D exp_check
  ab_gemm
}

ab_gemm() { # AB_DEFINES: ";"-separated define sets, the empty one is shipped (AB_DEFINES="" alone: shipped only)
  run 500 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/ab_gemm.py \
    --defines "${AB_DEFINES-;BS_SASS_FFMA_YIELD=9;BS_SASS_FFMA_YIELD=16}" \
    --tiles "${AB_TILES:-}" --max-workspace-mb "${AB_MAX_WS_MB:-64}" --rounds "${AB_ROUNDS:-3}" --shapes "${AB_SHAPES:-targets}" \
    --pdl "${AB_PDL:-on}" --json "$OUT/ab_gemm.json"
}

# What cuBLASLt runs for the blockwise GEMMs, and ours beside it (ncu: name,
# launch geometry, registers, shared memory, throughput, warp states).
lt_kernels() {
  local NCU=$(find_ncu)
  [ -n "$NCU" ] || { echo "no ncu"; return; }
  run 400 "$NCU" --clock-control none --launch-count 12 -k regex:'^(?!bs_quant|.*elementwise|.*vectorized|.*distribution)' \
    --section LaunchStats --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    env PYTHONPATH=python python3 bench/profile_cublaslt.py > "$OUT/lt_kernels.txt" 2>&1
}

# Sustained clocks and power, ours beside cuBLASLt (bench/power_gemm.py).
power() {
  run 300 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/power_gemm.py \
    --tiles "${POWER_TILES:-bm=128,bn=128;bm=128,bn=192}" --shapes "${POWER_SHAPES:-4096x7168x16384,16384x14336x4096,4096x2112x7168}"
}

# Correctness of a kernel experiment: the tails / forms / tiles subset of
# gemm_sweep with the define set in EXP_DEFINES (NVRTC -D flags).
exp_check() {
  local d="" x
  for x in ${EXP_DEFINES:?}; do d="$d --define $x"; done
  run 120 $GEN --run --debug-hang --iters 0 --m 77 --n 200 --k 7008 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 129 --n 1000 --k 4096 --force-tile splits=3 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 333 --n 520 --k 1008 --form wgrad $d
  run 120 $GEN --run --debug-hang --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate $d
  for t in bm=128,bn=128 bm=128,bn=160 bm=128,bn=192 bm=64,bn=128 bm=128,bn=112 bm=128,bn=128,cluster=2 \
           bm=256,bn=128 bm=256,bn=112 bm=128,bn=64,splits=4,ksplit=4 bm=128,bn=112,splits=2,ksplit=2; do
    run 120 $GEN --run --debug-hang --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t $d
  done
  # Two 64-row waves per consumer warpgroup (bm = 256): tails, wgrad, f32 +=, split-K.
  run 120 $GEN --run --debug-hang --iters 0 --m 300 --n 2112 --k 1040 --force-tile bm=256,bn=128 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 700 --n 1040 --k 2944 --force-tile bm=256,bn=128 --form wgrad $d
  run 120 $GEN --run --debug-hang --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=256,bn=64 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 129 --n 1000 --k 4096 --force-tile bm=256,bn=64,splits=3 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 700 --n 1040 --k 2944 --force-tile bm=128,bn=128,cluster=2 --form wgrad $d
  run 120 $GEN --run --debug-hang --iters 0 --m 700 --n 1040 --k 2944 --force-tile bm=128,bn=64,cluster=2,splits=3 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 300 --n 2112 --k 1024 --force-tile bm=128,bn=128,cluster=2 $d
  run 120 $GEN --run --debug-hang --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate --force-tile bm=128,bn=128,cluster=2 $d
  # The 256-row pairs the planner picks for large GEMMs, and turn-taking.
  pair_sweep $d
}

# ncu stall reasons and L2 traffic of single CTAs against CTA pairs (bn 128).
pair_ncu() {
  NCU_TILES="bm=128,bn=128 bm=128,bn=128,cluster=2" NCU_K=4096 ncu_tiles
}

# ncu summaries (speed of light, memory, warp states) of forced tiles on
# 4096x7168xNCU_K (default 16384): NCU_TILES="tile[@define,...] ..."
# (default: the shipped pair).
ncu_tiles() {
  local NCU=$(find_ncu) t d x
  [ -n "$NCU" ] || { echo "no ncu"; return; }
  for t in ${NCU_TILES:-bm=256,bn=128,cluster=2}; do
    d=""
    if [[ $t == *@* ]]; then
      for x in $(echo "${t#*@}" | tr , ' '); do d="$d --define $x"; done; fi
    timeout 200 "$NCU" --clock-control none -k regex:bs_gemm -c 1 --print-details all \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section SchedulerStats --section ComputeWorkloadAnalysis $GEN --run --no-check --iters 0 \
      --m ${NCU_M:-4096} --n ${NCU_N:-7168} --k ${NCU_K:-16384} --force-tile ${t%@*} $d \
      > "$OUT/ncu_${NCU_M:-4096}x${NCU_N:-7168}x${NCU_K:-16384}_$(echo "$t" | tr '=,@' '___').txt" 2>&1
  done
}

# Per-instruction stall samples (ncu source page, SASS) of our bn 128
# kernel and of cuBLASLt's for 4096x7168x16384: where each loop waits.
sass_stalls() {
  local NCU=$(find_ncu) d="$OUT/stalls"
  [ -n "$NCU" ] || { echo "no ncu"; return; }
  mkdir -p "$d"
  [ -n "${STALL_SKIP_OURS:-}" ] || timeout 200 "$NCU" --clock-control none -k regex:bs_gemm -c 1 --section SourceCounters \
    --section WarpStateStats -f -o "$d/bs_bn${STALL_BN:-128}${STALL_TAG:-}" $GEN --run --no-check --iters 0 \
    --m 4096 --n 7168 --k 16384 --force-tile ${STALL_TILE:-bm=128,bn=${STALL_BN:-128}} ${STALL_ARGS:-} > "$d/bs.log" 2>&1
  [ -n "${STALL_SKIP_LT:-}" ] || timeout 300 "$NCU" --clock-control none -k regex:nvjet -c 1 --section SourceCounters \
    --section WarpStateStats -f -o "$d/lt" env PYTHONPATH=python python3 bench/profile_cublaslt.py > "$d/lt.log" 2>&1
  local r
  for r in "$d"/*.ncu-rep; do
    "$NCU" -i "$r" --page source --csv --print-source sass > "${r%.ncu-rep}_sass.csv" 2> "${r%.ncu-rep}_sass.err"
    "$NCU" -i "$r" --page details --print-details all > "${r%.ncu-rep}_details.txt" 2>&1
    wc -l "${r%.ncu-rep}_sass.csv"; head -c 600 "${r%.ncu-rep}_sass.err"
    python3 bench/sass_stalls.py "${r%.ncu-rep}_sass.csv" > "${r%.ncu-rep}_summary.txt" 2>&1
    cat "${r%.ncu-rep}_summary.txt"
  done
  rm -f "$d"/*.ncu-rep
  # Few files come back from the device: one archive.
  tar -C "$OUT" -czf "$OUT/stalls.tgz" stalls && rm -rf "$d"
}

mini_sweep() {
  local dbg=--debug-hang
  run 120 $GEN --run $dbg --iters 0 --m 77 --n 200 --k 7008
  run 120 $GEN --run $dbg --iters 0 --m 129 --n 1000 --k 4096 --force-tile splits=3
  run 120 $GEN --run $dbg --iters 0 --m 333 --n 520 --k 1008 --form wgrad
  run 120 $GEN --run $dbg --iters 0 --m 512 --n 512 --k 1024 --form wgrad --out-dtype f32 --accumulate
  run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile bm=128,bn=160
  run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile bm=128,bn=128,cluster=2
}

# CTA pairs (A multicast) against single CTAs, with and without the
# promotion (BS_EXP_NO_PROMOTE: unchecked, only its time means something).
cluster_explore() {
  local G="$GEN --run --iters 40"
  for s in "4096 7168 4096" "4096 4096 7168"; do
    set -- $s
    local S="--m $1 --n $2 --k $3"
    run 120 $G --check-rows 16 $S
    run 120 $G --check-rows 16 $S --force-tile bm=128,bn=128
    run 120 $G --check-rows 16 $S --force-tile bm=128,bn=112
    run 120 $G --check-rows 16 $S --force-tile bm=128,bn=128,cluster=2
    run 120 $G --check-rows 16 $S --force-tile bm=128,bn=160,cluster=2
    run 120 $G --no-check $S --force-tile bm=128,bn=128,cluster=2 --define BS_EXP_NO_PROMOTE
    run 120 $G --no-check $S --force-tile bm=128,bn=128 --define BS_EXP_NO_PROMOTE
  done
}

cast_time() { # [shape ...], each "rows cols"; default both bench sizes
  local shapes=("$@")
  [ ${#shapes[@]} -gt 0 ] || shapes=("32768 4096" "65536 8192")
  for sh in "${shapes[@]}"; do
    set -- $sh
    for r in "1x128" "128x1 --col-major" "1x128 --transpose" "128x128" "128x128 --col-major"; do
      run 120 $GEN --op quantize --run --iters 50 --rows $1 --cols $2 --recipe $r
    done
  done
}

# Both benches as bench/RESULTS.md reports them: the cast bench, and the
# full GEMM bench with the forced tile variants beside the selected tiles.
# The GEMM table of bench/RESULTS.md: gemm_table <timeout-s> <default
# variants> (VARIANTS_FINAL overrides the forced tiles timed beside).
gemm_table() {
  run "$1" env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_gemm.py \
    --variants "${VARIANTS_FINAL:-$2}" --json "$OUT/bench_gemm.json"
}

release_benches() {
  quant_bench
  gemm_table 300 "bm=128,bn=128;bm=128,bn=160;bm=128,bn=192;bm=128,bn=112,splits=2"
}

# Release validation that fits one device call: the GEMM tiles and tails
# (a subset of gemm_sweep), every cast with tails, the cast bench, the full
# GEMM bench with tile variants, cast timing, then the Python tests.
release1() {
  mini_sweep
  for t in bm=64,bn=128 bm=128,bn=64 bm=128,bn=192 bm=128,bn=112; do
    run 120 $GEN --run --debug-hang --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t
    run 120 $GEN --run --debug-hang --iters 0 --m 700 --n 1040 --k 2944 --force-tile $t --form wgrad
  done
  quant_sweep
  release_benches
  cast_time "32768 4096"
  python_tests
}

# The final check of a session: casts and a few GEMM tiles, then both
# benches on what ships.
release2() {
  mini_sweep; quant_sweep; release_benches
}

# bm = 256 tiles in CTA pairs: as the planner picks them (tails in M and N,
# an odd N-tile count leaving the last pair's second tile empty; dgrad),
# forced for fwd, dgrad and wgrad with tails, and for f32 and C += (bn = 64:
# a 256x128 f32 tile's staging leaves no room for two stages). Arguments
# (e.g. exp_check's --define flags) go to every run.
pair_sweep() {
  local dbg=--debug-hang f
  run 120 $GEN --run $dbg --iters 0 --m 4000 --n 3968 --k 4000 "$@"
  run 120 $GEN --run $dbg --iters 0 --m 4000 --n 3968 --k 4000 --form dgrad "$@"
  for f in fwd wgrad; do
    run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 2944 --force-tile bm=256,bn=128,cluster=2 --form $f "$@"
  done
  run 120 $GEN --run $dbg --iters 0 --m 300 --n 2112 --k 1040 --force-tile bm=256,bn=128,cluster=2 --form dgrad "$@"
  run 120 $GEN --run $dbg --iters 0 --m 300 --n 2112 --k 1024 --force-tile bm=256,bn=128,cluster=2 "$@"
  run 120 $GEN --run $dbg --iters 0 --m 1000 --n 1040 --k 2944 --force-tile bm=256,bn=64,cluster=2 --out-dtype f32 "$@"
  run 120 $GEN --run $dbg --iters 0 --m 512 --n 1024 --k 1024 --force-tile bm=256,bn=64,cluster=2 --form wgrad --out-dtype f32 --accumulate "$@"
  # 256-row tiles taking turns (>= 32 K-blocks per unit): alone with tails,
  # and split along K (65 K-blocks in 2 splits).
  run 120 $GEN --run $dbg --iters 0 --m 700 --n 1040 --k 4224 --force-tile bm=256,bn=128 "$@"
  run 120 $GEN --run $dbg --iters 0 --m 129 --n 1000 --k 8320 --force-tile bm=256,bn=64,splits=2 "$@"
}

# Cast A/B: CAST_VARIANTS is a ';'-separated list of variants, each
# "defines[|env=value ...]" ("" = the shipped kernels). Every variant's
# kernels are checked (quant_sweep, QUICK) before AB_ROUNDS rounds of
# bench_quant over all variants in turn.
cast_ab() {
  local rounds=${AB_ROUNDS:-2} r i v defs envs
  IFS=';' read -ra sets <<< "${CAST_VARIANTS:?set CAST_VARIANTS}"
  for i in "${!sets[@]}"; do
    defs=${sets[$i]%%|*}
    [ -z "$defs" ] || [ -n "${CAST_SKIP_CHECK:-}" ] && continue
    echo "=== check variant $i: ${sets[$i]}" | tee -a "$OUT/check.log"
    export BLOCKSCALE_EXP_DEFINES="$defs"; QUICK=1 quant_sweep; unset BLOCKSCALE_EXP_DEFINES
  done
  for r in $(seq "$rounds"); do
    for i in "${!sets[@]}"; do
      v=${sets[$i]}; defs=${v%%|*}; envs=""; [ "$v" != "$defs" ] && envs=${v#*|}
      echo "=== round $r variant $i: ${v:-shipped}" | tee -a "$OUT/check.log"
      run 300 env BLOCKSCALE_EXP_DEFINES="$defs" $envs PYTHONPATH=python PYTHONUNBUFFERED=1 \
        python3 bench/bench_quant.py ${BQ_ARGS:-} --json "$OUT/bench_quant_r${r}_v$i.json"
    done
  done
}

# keep_l2_layer_ab <rounds> <bench_linear.py flags...>: the layer with the
# casts' L2 rule on, then off (BLOCKSCALE_EXP_QUANT_KEEP_L2), one process
# each, in alternation; $OUT/bench_linear_r<round>_keep<1|0>.json
keep_l2_layer_ab() {
  local rounds=$1 r v; shift
  for r in $(seq 1 "$rounds"); do
    for v in 1 0; do
      run 300 env BLOCKSCALE_EXP_QUANT_KEEP_L2=$v PYTHONPATH=python PYTHONUNBUFFERED=1 \
        python3 bench/bench_linear.py "$@"
      mv "$OUT/bench_linear.json" "$OUT/bench_linear_r${r}_keep$v.json"
    done
  done
}

mode=${1:-smoke}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$OUT/check.log"
case "$mode" in
  smoke) sass; gemm_sweep; quant_sweep; quick_time ;;
  sweep) gemm_sweep ;;
  quant) quant_sweep ;;
  time) quick_time ;;
  round2) cluster_sweep; python_tests; bench; profile ;;
  round3) gemm_sweep; cluster_sweep; python_tests; bench; profile ;;
  round4) python_tests; bench; profile_source; other_benches ;;
  final) gemm_sweep; quant_sweep; python_tests; full_bench; other_benches ;;
  recheck) run 120 $GEN --run --debug-hang --iters 0 --m 256 --n 384 --k 1024 --a-type e5m2
           python_tests
           run 300 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_linear.py
           run 300 env -u BLOCKSCALE_CACHE_DIR build/bin/blockscale-bench-jit --json "$OUT/bench_jit.json" ;;
  sharded) sharded ;;
  parity) parity ;;
  multigpu) sharded; parity ;;
  bench) bench ;;
  python) python_tests ;;
  profile) profile ;;
  explore) explore ;;
  inspect) inspect ;;
  ffma_yield) ffma_yield ;;
  ab_gemm) ab_gemm ;;
  lt_kernels) lt_kernels ;;
  power) power ;;
  exp_check) exp_check ;;
  pair_ncu) pair_ncu ;;
  sass_stalls) sass_stalls ;;
  ncu_tiles) ncu_tiles ;;
  wave_pairs) # bm = 256 in CTA pairs (A multicast): correctness, then timing
    pair_sweep
    AB_DEFINES="" AB_TILES=";bm=256,bn=128;bm=256,bn=128,cluster=2" AB_ROUNDS=1 ab_gemm ;;
  gemm_release) # the GEMM table of bench/RESULTS.md, then correctness
    gemm_table 420 "bm=128,bn=128;bm=128,bn=192;bm=256,bn=128;bm=256,bn=128,cluster=2"
    gemm_sweep; pair_sweep; python_tests ;;
  release1) release1 ;;
  release2) release2 ;;
  cast_time) cast_time ;;
  explore3) mini_sweep; quant_sweep; cluster_explore ;;
  casts) quant_sweep; cluster_sweep; quant_bench; cast_time "65536 8192" ;;
  casts_final) quant_sweep; quant_bench ;;
  cast_ab) cast_ab ;;
  producer) # sixteenth session: a producer warp issues the transposing
    # casts' TMA loads and stores; every cast checked, then timed against
    # worker 0 issuing them (BS_EXP_Q_NO_PRODUCER) in three rounds
    quant_sweep
    CAST_VARIANTS="${CAST_VARIANTS-;BS_EXP_Q_NO_PRODUCER}" AB_ROUNDS=${AB_ROUNDS:-3} \
      BQ_ARGS="${BQ_ARGS---extra 32768x8192,65536x4096}" cast_ab ;;
  final16) # sixteenth session's release check: every cast, the Python GPU
    # tests, the casts against worker 0 issuing the TMA operations (two
    # rounds), the graph-captured layer
    quant_sweep
    python_tests
    CAST_VARIANTS=";BS_EXP_Q_NO_PRODUCER" AB_ROUNDS=2 \
      BQ_ARGS="--extra 32768x8192,65536x4096" cast_ab
    run 300 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_linear.py --graph ;;
  mincta) # the producer warp with and without __launch_bounds__'s minimum
    # of two CTAs per SM, against worker 0 issuing the TMA operations
    # (bench_quant checks its shapes bit-exact)
    CAST_SKIP_CHECK=1 CAST_VARIANTS=";BS_EXP_Q_MINCTAS=0;BS_EXP_Q_NO_PRODUCER" AB_ROUNDS=2 \
      BQ_ARGS="--extra 32768x8192,65536x4096" cast_ab ;;
  panel16) # with the producer warp: panel widths and evict_last on the
    # transposed store again (bench_quant checks its shapes bit-exact)
    CAST_SKIP_CHECK=1 CAST_VARIANTS="${CAST_VARIANTS-;BS_EXP_Q_PANEL=4;BS_EXP_Q_PANEL=16;BS_EXP_Q_TSTORE_EL}" \
      AB_ROUNDS=${AB_ROUNDS:-2} BQ_ARGS="--extra 32768x8192,65536x4096" cast_ab ;;
  el_sizes) # evict_last on the transposed store (with the producer warp)
    # over output sizes 64-192 MB, to place a size threshold
    CAST_SKIP_CHECK=1 CAST_VARIANTS=";BS_EXP_Q_TSTORE_EL" AB_ROUNDS=${AB_ROUNDS:-2} \
      BQ_ARGS="--extra 16384x4096,24576x4096,16384x8192,40960x4096,49152x4096" cast_ab ;;
  keep_l2) # transposed results up to 256 MiB kept in L2 (evict_last,
    # chosen at launch): every cast checked, then timed against the rule
    # turned off, the Python GPU tests, and the graph-captured layer with
    # the rule on and off (whether the kept lines slow the GEMMs after)
    QUICK=1 quant_sweep
    CAST_VARIANTS=";|BLOCKSCALE_EXP_QUANT_KEEP_L2=0" AB_ROUNDS=${AB_ROUNDS:-2} \
      BQ_ARGS="--extra 16384x4096,65536x4096" cast_ab
    python_tests
    keep_l2_layer_ab 1 --graph ;;
  keep_l2_layer) # the graph-captured layer with the L2 rule on and off,
    # alternating processes, LAYER_ROUNDS rounds (does a result kept in L2
    # slow the GEMMs after it?)
    keep_l2_layer_ab "${LAYER_ROUNDS:-3}" --graph-only --rep "${LAYER_REP:-400}"
    # and the casts as shipped, once more, on this start
    quant_bench ;;
  cast_l2) # BS_EXP_Q_TSTORE_EF / _EL (thirteenth session, prepared, not
    # run): the transposing casts' TMA store with an L2 eviction priority,
    # checked and timed against the shipped casts
    CAST_VARIANTS="${CAST_VARIANTS-;BS_EXP_Q_TSTORE_EF;BS_EXP_Q_TSTORE_EL}" AB_ROUNDS=${AB_ROUNDS:-2} cast_ab ;;
  pairs) pair_sweep ;;
  timeline) # per-CTA phase stamps (blockscale-gen --timeline) of the M = 128
    # targets and a large one; the time line is the last launch's
    for a in "--m 128 --n 2112 --k 7168" "--m 128 --n 7168 --k 16384" "--m 128 --n 24576 --k 1536" \
             "--m 128 --n 2112 --k 7168 --force-tile bm=128,bn=48,splits=3" "--m 4096 --n 7168 --k 16384"; do
      run 120 $GEN --run --iters 20 --timeline $a
    done ;;
  ksplit) # splits summed in a cluster: correctness, then timing against the
    # planner's workspace split-K on the M = 128 shapes
    [ -n "${KS_SKIP_SWEEP:-}" ] || ksplit_sweep
    AB_DEFINES="" AB_ROUNDS=${AB_ROUNDS:-2} AB_SHAPES=128x2112x7168 \
      AB_TILES="${KS_TILES_2112:-;bm=128,bn=80,splits=4,ksplit=4;bm=128,bn=64,splits=3,ksplit=3;bm=128,bn=32,splits=2,ksplit=2;bm=128,bn=144,splits=8,ksplit=8;bm=128,bn=128,splits=6,ksplit=6;bm=128,bn=64,splits=4,ksplit=4;bm=128,bn=96,splits=4,ksplit=4}" ab_gemm
    cp "$OUT/ab_gemm.json" "$OUT/ab_ksplit_2112.json"
    AB_DEFINES="" AB_ROUNDS=${AB_ROUNDS:-2} AB_SHAPES=128x7168x16384 \
      AB_TILES="${KS_TILES_7168:-;bm=128,bn=112,splits=2,ksplit=2;bm=128,bn=128,splits=2,ksplit=2;bm=128,bn=192,splits=3,ksplit=3}" ab_gemm
    cp "$OUT/ab_gemm.json" "$OUT/ab_ksplit_7168.json"
    AB_DEFINES="" AB_ROUNDS=${AB_ROUNDS:-2} AB_SHAPES=128x4096x7168 \
      AB_TILES="${KS_TILES_4096:-;bm=128,bn=144,splits=4,ksplit=4;bm=128,bn=64,splits=2,ksplit=2;bm=128,bn=128,splits=3,ksplit=3;bm=128,bn=160,splits=4,ksplit=4;bm=128,bn=128,splits=4,ksplit=4}" ab_gemm
    cp "$OUT/ab_gemm.json" "$OUT/ab_ksplit_4096.json" ;;
  ks_timeline) # phase stamps of the cluster-summed splits beside the
    # workspace's
    for a in "--m 128 --n 2112 --k 7168" \
             "--m 128 --n 2112 --k 7168 --force-tile bm=128,bn=64,splits=3,ksplit=3" \
             "--m 128 --n 2112 --k 7168 --force-tile bm=128,bn=80,splits=4,ksplit=4" \
             "--m 128 --n 2112 --k 7168 --force-tile bm=128,bn=64,splits=4,ksplit=4" \
             "--m 128 --n 4096 --k 7168" "--m 128 --n 4096 --k 7168 --force-tile bm=128,bn=64,splits=2,ksplit=2" \
             "--m 128 --n 7168 --k 16384 --force-tile bm=128,bn=112,splits=2,ksplit=2"; do
      run 120 $GEN --run --iters 20 --timeline $a
    done ;;
  ksplit_all) # both of the above
    ksplit_sweep
    run 300 bash "$0" ks_timeline
    run 500 env KS_SKIP_SWEEP=1 bash "$0" ksplit ;;
  release12) # the twelfth session's table (ksplit in the planner), the
    # Python tests, the sweeps, and the other shapes whose choice changed
    # against the old choice forced (shape%tile)
    gemm_table 420 "bm=128,bn=128;bm=128,bn=192;bm=256,bn=128;bm=256,bn=128,cluster=2"
    python_tests
    changed12
    gemm_sweep
    for a in "--m 128 --n 2112 --k 7168" "--m 128 --n 4096 --k 7168"; do
      run 120 $GEN --run --iters 20 --timeline $a
    done ;;
  changed12) changed12 ;;
  fastdiv) # the work-unit decode by multiply and shift (thirteenth session,
    # run 83): every GEMM sweep, the table, stamps and an A/B against the
    # decode with `/` (BS_EXP_PLAIN_DIV)
    gemm_sweep
    gemm_table 300 "bm=128,bn=128;bm=128,bn=192;bm=256,bn=128;bm=256,bn=128,cluster=2"
    for a in "--m 128 --n 2112 --k 7168" "--m 128 --n 24576 --k 1536"; do
      for d in "" "--define BS_EXP_PLAIN_DIV"; do
        run 120 $GEN --run --iters 20 --timeline $a $d
      done
    done
    AB_DEFINES="${AB_DEFINES-;BS_EXP_PLAIN_DIV}" AB_ROUNDS=${AB_ROUNDS:-2} \
      AB_SHAPES=${AB_SHAPES:-targets} ab_gemm ;;
  s14b) # fourteenth session, last call (run 90): the GEMM table with the
    # relaxed cluster arrival shipped, the eager probe, the SASS of
    # 4096x2112x7168 with each decode (FastDiv ran 1-4 % slower there in
    # runs 83-88), the transposing casts' L2 hints in three rounds, the
    # cluster-sum sweep and the Python tests
    gemm_table 300 "bm=128,bn=128;bm=128,bn=192;bm=256,bn=128;bm=256,bn=128,cluster=2"
    run 200 env PYTHONPATH=python python3 bench/tools/eager_probe.py
    for v in fd: plain:--define=BS_EXP_PLAIN_DIV; do
      $GEN --m 4096 --n 2112 --k 7168 --emit cubin ${v#*:} -o "$OUT/k2112_${v%%:*}.cubin" &&
        dump_sass "$OUT/k2112_${v%%:*}.cubin"
    done
    ksplit_sweep
    python_tests
    CAST_VARIANTS=";BS_EXP_Q_TSTORE_EF;BS_EXP_Q_TSTORE_EL" AB_ROUNDS=3 cast_ab ;;
  linear_el) # the layer (three GEMMs, five casts) with the transposing casts'
    # TMA store marked evict_last between two runs without: does the hint's
    # L2 residency cost the GEMMs that follow the casts?
    i=0
    for v in "" BS_EXP_Q_TSTORE_EL ""; do
      i=$((i+1)); echo "=== linear $i defines=${v:--}" | tee -a "$OUT/check.log"
      run 300 env BLOCKSCALE_EXP_DEFINES="$v" PYTHONPATH=python PYTHONUNBUFFERED=1 \
        python3 bench/bench_linear.py
      mv "$OUT/bench_linear.json" "$OUT/bench_linear_$i${v:+_el}.json"
    done ;;
  pdl) # fifteenth session: programmatic dependent launch. The Python tests
    # (with the chain tests), the chain test once more with the kernels'
    # wait compiled out (expected to fail: the test can), then GEMMs, casts
    # and the layer timed with and without it in the same runs
    python_tests
    echo "=== PDL chain tests without gridDepWait (BS_EXP_NO_GRID_DEP_WAIT): expected to FAIL" | tee -a "$OUT/check.log"
    timeout 300 env BLOCKSCALE_EXP_DEFINES=BS_EXP_NO_GRID_DEP_WAIT PYTHONPATH=python \
      python3 -m pytest -q -p no:cacheprovider test/gpu/test_python_ops.py -k programmatic 2>&1 | tail -n 30 | tee -a "$OUT/check.log"
    AB_DEFINES="" AB_PDL=both AB_ROUNDS=${AB_ROUNDS:-2} AB_SHAPES=${AB_SHAPES:-all} ab_gemm
    CAST_VARIANTS=";|BLOCKSCALE_PDL=0" AB_ROUNDS=${AB_ROUNDS:-2} cast_ab
    run 400 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_linear.py --graph --pdl both ;;
  pdl2) # fifteenth session, run 95: the graph-chain test with and without
    # the kernels' wait (without it the pdl=True case must fail and the
    # pdl=False case pass), the Python tests, then the GEMM table with
    # programmatic launch (and a no-PDL column)
    echo "=== PDL chain test without gridDepWait: pdl=True expected to FAIL, pdl=False to pass" | tee -a "$OUT/check.log"
    timeout 300 env BLOCKSCALE_EXP_DEFINES=BS_EXP_NO_GRID_DEP_WAIT PYTHONPATH=python \
      python3 -m pytest -q -p no:cacheprovider test/gpu/test_python_ops.py -k programmatic 2>&1 | tail -n 40 | tee -a "$OUT/check.log"
    python_tests
    gemm_table 420 "bm=128,bn=128;bm=128,bn=192;bm=256,bn=128;bm=256,bn=128,cluster=2" ;;
  pdl_cast) # run 96: the transposing casts' evict_last store under
    # programmatic launch, and the layer (eager and graph-captured) with it
    CAST_VARIANTS="${CAST_VARIANTS-;BS_EXP_Q_TSTORE_EL}" AB_ROUNDS=${AB_ROUNDS:-3} cast_ab
    i=0
    for v in "" BS_EXP_Q_TSTORE_EL; do
      i=$((i+1)); echo "=== linear $i defines=${v:--}" | tee -a "$OUT/check.log"
      run 300 env BLOCKSCALE_EXP_DEFINES="$v" PYTHONPATH=python PYTHONUNBUFFERED=1 \
        python3 bench/bench_linear.py --graph
      mv "$OUT/bench_linear.json" "$OUT/bench_linear_$i${v:+_el}.json"
    done ;;
  pdl3) # run 97: the GEMM table once more (programmatic launch), then the
    # evict_last store on the transposing casts at two more sizes between
    # 32768x4096 (where it gained) and 65536x8192 (where it lost)
    gemm_table 300 "bm=128,bn=128;bm=256,bn=128,cluster=2"
    BQ_ARGS="--extra 32768x8192,65536x4096" CAST_VARIANTS=";BS_EXP_Q_TSTORE_EL" AB_ROUNDS=2 cast_ab ;;
  host_probe) # the Python host path of scaled_mm piece by piece
    # (bench/tools/host_path_probe.py), after the whole-call probe
    run 200 env PYTHONPATH=python python3 bench/tools/eager_probe.py
    run 200 env PYTHONPATH=python python3 bench/tools/host_path_probe.py ;;
  py_fast) # the Python ops calling their implementation directly in eager
    # mode: the Python tests, then the host-path probes
    python_tests
    run 200 env PYTHONPATH=python python3 bench/tools/host_path_probe.py
    run 200 env PYTHONPATH=python python3 bench/tools/eager_probe.py ;;
  cast_panel) # the transposing casts' panel order (8 column tiles, shipped
    # since runs 92-93) against input order (BS_EXP_Q_PANEL=0), 16-wide
    # panels and the evict_last store, checked and timed
    CAST_VARIANTS="${CAST_VARIANTS-;BS_EXP_Q_PANEL=0;BS_EXP_Q_PANEL=16;BS_EXP_Q_TSTORE_EL}" \
      AB_ROUNDS=${AB_ROUNDS:-2} cast_ab ;;
  split_probe) # split-K at M = 128 (2026-12-03, twelfth session): clusters the
    # GPU holds per size, the phase stamps, and the kernels without the
    # split-K hand-off (split 0 stores alone: a wrong result, the floor)
    if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
      run 120 "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -arch=sm_90a -o /tmp/cluster_occupancy bench/tools/cluster_occupancy.cu
      run 60 /tmp/cluster_occupancy
    fi
    for a in "--m 128 --n 2112 --k 7168" "--m 128 --n 7168 --k 16384"; do
      run 120 $GEN --run --iters 20 --timeline $a
    done
    AB_DEFINES="${AB_DEFINES-;BS_EXP_SPLIT_SKIP}" AB_ROUNDS=${AB_ROUNDS:-2} \
      AB_SHAPES=${AB_SHAPES:-128x2112x7168,128x7168x16384,128x4096x7168} ab_gemm ;;
  small_m) # M = 128 GEMMs: where the time goes (2026-12-03 runs 69 and 71):
    # the launch alone, no K loop (prologue, split-K, epilogue), no A loads,
    # no operand loads (results are garbage for all but the first)
    AB_DEFINES="${AB_DEFINES-;BS_EXP_EMPTY;BS_EXP_NO_MAIN;BS_EXP_NO_A_LOAD;BS_EXP_NO_TMA}" \
      AB_SHAPES=${AB_SHAPES:-128x7168x16384,128x2112x7168,128x24576x1536,128x4096x7168} ab_gemm ;;
  casts_check) quant_sweep; python_tests; quant_bench; profile_casts ;;
  refresh) # casts checked both ways, the Python tests, then the layer and
    # JIT-latency benches of bench/RESULTS.md
    QUICK=1 quant_sweep
    for r in "1x128 --transpose" "128x1 --col-major" "1x128"; do
      BLOCKSCALE_EXP_QUANT_DIRECT=1 run 120 $GEN --op quantize --run --iters 0 --rows 2064 --cols 4096 --recipe $r
    done
    python_tests
    run 300 env PYTHONPATH=python PYTHONUNBUFFERED=1 python3 bench/bench_linear.py
    run 300 env -u BLOCKSCALE_CACHE_DIR build/bin/blockscale-bench-jit --json "$OUT/bench_jit.json" ;;
  jit_check) # the JIT and the planner on the GPU: Python tests, sharded
    # programs simulated, a GEMM and a cast from blockscale-gen
    python_tests; sharded
    run 120 $GEN --run --iters 0 --m 300 --n 2112 --k 1040
    run 120 $GEN --op quantize --run --iters 0 --rows 1008 --cols 2112 --recipe 128x1 --col-major ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo "gpu-check $mode: $FAILS failure(s)" | tee -a "$OUT/check.log"
[ "$FAILS" = 0 ]
