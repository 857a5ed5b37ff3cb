#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# GPU checks and benchmarks; runs on the GPU machine (docs/GPU.md).
#
# Build here first: scripts/build-gpu-bundle.sh (and, for an A/B of two
# builds, scripts/build-gpu-bundle.sh --ref <commit> --out .gpu/base). Then,
# through the device tool with carry [".gpu"] (plus ".anchors" for DeepGEMM,
# ".torchao" for torchao: scripts/fetch-torchao.sh):
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
#   grouped   m-grouped GEMMs: SASS of the grouped kernels, pytest test/gpu/test_grouped.py
#   kgrouped  k-grouped weight gradient and its group-aware cast: SASS of the kernels,
#             pytest test/gpu/test_kgrouped.py
#   gbench    bench/bench_grouped.py (DeepGEMM's grouped kernels beside when .anchors/
#             holds its archive)
#   gprofile  the m-grouped kernels of blockscale and DeepGEMM under ncu (speed of light,
#             memory, compute, warp states; GPROFILE_ARGS, default --quick, picks shapes)
#   kbench    bench/bench_grouped.py --only k: the k-grouped weight gradient beside
#             DeepGEMM's k-grouped kernel and a loop of dense wgrad GEMMs
#   bench     bench/bench_gemm.py, full run (DeepGEMM beside when .anchors/ holds its
#             archive), then bench/bench_quant.py (without torchao: see qbench)
#   qbench    bench/bench_quant.py: the casts (and dual-layout casts) against the copy and
#             torchao's Triton casts when .torchao/ holds its archive
#   jit       build/bin/blockscale-bench-jit (JIT latency from a cold cache)
#   linear    bench/bench_linear.py --graph: the FP8 linear layer against bf16, torchao's
#             (when .torchao/ holds its archive) and the recipe on cuBLASLt
#   inference bench/bench_inference.py --graph
#   train     examples/train_llama.py, FP8 vs bf16, 8192 tokens a step: step time and loss
#             after 300 steps at hidden 4096 (4 layers), the loss again at hidden 2048
#   profile [FILE]
#             each build of a variants file (bench/ab.py's format; lib= keys only) and
#             DeepGEMM under ncu at locked base clocks: GEMM kernel durations, i.e. work
#             per clock cycle without the power cap's clock changes (bench/profile_pair.py)
#   vtest FILE
#             the GPU tests (PYTEST_ARGS, default test/gpu/test_grouped.py) once per
#             variant of FILE (bench/ab.py's format) that names a lib=, against that
#             library (BLOCKSCALE_LIB): a kernel patch's tests before its A/B
#   ab [FILE] [bench/ab.py flags...]
#             same-process A/B of builds (bench/ab.py; FILE default bench/variants/rebuild.txt),
#             GEMM targets and casts, two rounds; takes the rest of the line
#   multigpu  sharded programs (--simulate, NCCL where enough GPUs) and the toy parity runs
#   all       smoke sweep casts python bench (longer than one 10-minute device call)
# BENCH_ARGS / LINEAR_ARGS / QBENCH_ARGS: more arguments for bench_gemm.py /
# bench_linear.py / bench_quant.py, e.g. BENCH_ARGS="--shapes targets" or
# LINEAR_ARGS="--shapes 8192x2048x2048" for a quick look; PYTEST_ARGS: what
# the python verb runs instead of test/gpu (e.g. one file, or -k EXPR test/gpu);
# BLOCKSCALE_GEN: the blockscale-gen that smoke, sweep and casts run (default
# build/bin's; e.g. .gpu/NAME/bin/blockscale-gen for a variant's sweep);
# TRAIN_RUNS=all: the train verb's hidden-4096 model with torchao's layer too;
# TRAIN_ARGS: more train_llama.py arguments for it (e.g. "--compile --optimizer
# fused"), which then also leave out the hidden-2048 run.
# Logs go to $OUT (default ./gpu-out): check.log, failures.log, JSON.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
GEN=${BLOCKSCALE_GEN:-build/bin/blockscale-gen}
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

# torchao's blockwise FP8 prototype (issue 32's anchor; never part of the
# project), unpacked from .torchao/torchao.tar.xz (scripts/fetch-torchao.sh,
# carried) into /tmp; the benches find it through BLOCKSCALE_TORCHAO.
setup_torchao() {
  local a=.torchao/torchao.tar.xz d=/tmp/torchao-src
  # Triton's autotuning results kept on disk: a later run on this machine skips it.
  export TRITON_CACHE_AUTOTUNING=${TRITON_CACHE_AUTOTUNING:-1}
  if [ ! -e "$a" ]; then
    export BLOCKSCALE_TORCHAO=off
    log "torchao: no $a (scripts/fetch-torchao.sh, carry .torchao); its columns are left out"
    return 0
  fi
  if [ ! "$d/.unpacked" -nt "$a" ]; then
    rm -rf "$d" && mkdir -p "$d" && tar -xJf "$a" -C "$d" || { fail "torchao: cannot unpack $a"; return 1; }
    touch "$d/.unpacked"
  fi
  export BLOCKSCALE_TORCHAO=$d
  run 120 python3 bench/torchao_anchor.py  # its commit, and a failure if it does not import
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

# Correctness cases (test/gpu/*-cases.txt, one argument list per line) are
# independent: run JOBS at a time (the GPU is shared; nothing here is
# timed), each logged to its own file, the logs tarred.
JOBS=${JOBS:-$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))}
run_queued() { # run_queued <name> <cases file> <command the arguments follow>
  local d="$OUT/$1" n=0 i rc c
  mkdir -p "$d"
  while IFS= read -r c; do
    case $c in ''|'#'*) continue ;; esac
    n=$((n + 1))
    ( echo "+ $3 $c"; timeout 180 $3 $c 2>&1; echo "rc=$?" ) > "$d/$n.log" &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  done < "$2"
  wait
  log "$1: $n cases from $2, $JOBS at a time"
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

v_sweep() { run_queued sweep test/gpu/gemm-cases.txt "$GEN --run --debug=hang --iters 0"; }
v_casts() { run_queued casts test/gpu/cast-cases.txt "$GEN --op quantize --run --iters 0"; }

v_python() { run 600 python3 -m pytest -x -q -p no:cacheprovider ${PYTEST_ARGS:-test/gpu} -s; }

# SASS of a grouped kernel (blockscale-gen --op grouped ARGS): QGMMA, no spills.
grouped_sass() {
  local tag=$1 cub cod q l; shift
  cub="$OUT/sass/grouped_$tag.cubin"
  mkdir -p "$OUT/sass"
  run 120 "$GEN" --op grouped "$@" --emit cubin -o "$cub" || return
  cod=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  "$cod" --dump-sass "$cub" > "${cub%.cubin}.sass" 2>&1
  q=$(grep -c QGMMA "${cub%.cubin}.sass")
  l=$(grep -cE '\b(LDL|STL)\b' "${cub%.cubin}.sass")
  log "SASS grouped $tag: $q QGMMA, $l LDL/STL"
  [ "$q" -gt 0 ] && [ "$l" = 0 ] || fail "SASS grouped $tag: expected QGMMA and no LDL/STL"
}

v_grouped() {
  grouped_sass contiguous --groups 8 --m 4096 --n 4096 --k 7168
  grouped_sass masked_f32 --groups 32 --grouping masked --m 20 --n 4096 --k 7168 --out-dtype f32
  grouped_sass pairs --groups 8 --m 512 --n 4096 --k 7168
  grouped_sass bm256_pairs --groups 8 --m 4096 --n 4096 --k 2048
  run 600 python3 -m pytest -x -q -p no:cacheprovider test/gpu/test_grouped.py -s
}

v_kgrouped() {
  grouped_sass k_f32 --grouping k --groups 8 --m 4096 --n 7168 --k 8192 --out-dtype f32
  grouped_sass k_acc --grouping k --groups 8 --m 4096 --n 7168 --k 8192 --out-dtype f32 --accumulate
  grouped_sass k_bf16 --grouping k --groups 8 --m 4096 --n 7168 --k 8192
  run 600 python3 -m pytest --maxfail=20 -q -p no:cacheprovider test/gpu/test_kgrouped.py -s
}

v_gbench() {
  setup_deepgemm
  run 560 python3 bench/bench_grouped.py --only m --json "$OUT/bench_grouped.json"
}

v_gprofile() {  # the m-grouped kernels of both libraries under ncu's sections
  setup_deepgemm
  run 560 ncu --profile-from-start off --kernel-name regex:'grouped_gemm|fp8_gemm' \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section LaunchStats --csv --log-file "$OUT/gprofile.csv" \
    python3 bench/bench_grouped.py --only m ${GPROFILE_ARGS:---quick} --profile 1 \
    --json "$OUT/gprofile.json"
}

v_kbench() {
  setup_deepgemm
  run 560 python3 bench/bench_grouped.py --only k --json "$OUT/bench_kgrouped.json"
}

v_bench() {
  setup_deepgemm
  run 560 python3 bench/bench_gemm.py --json "$OUT/bench_gemm.json" ${BENCH_ARGS:-}
  run 300 python3 bench/bench_quant.py --no-torchao --json "$OUT/bench_quant.json"
}

v_qbench() {
  setup_torchao
  run 570 python3 bench/bench_quant.py --json "$OUT/bench_quant.json" ${QBENCH_ARGS:-}
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
v_linear() {  # (torchao's first calls autotune its casts: minutes)
  setup_torchao
  run 570 python3 bench/bench_linear.py --graph --json "$OUT/bench_linear.json" ${LINEAR_ARGS:-}
}
v_inference() { run 300 python3 bench/bench_inference.py --graph; }

v_train() {  # issue 32's training step, FP8 against bf16, 8192 tokens a step (~3 min)
  # the issue's model: step time, and the loss after 300 steps (TRAIN_RUNS=all:
  # torchao's layer too, when .torchao/ holds its archive)
  [ "${TRAIN_RUNS:-both}" = all ] && setup_torchao
  run 400 python3 examples/train_llama.py --model builtin --hidden 4096 --layers 4 --heads 32 \
    --steps 300 --lr 3e-4 --runs "${TRAIN_RUNS:-both}" ${TRAIN_ARGS:-} --json "$OUT/train_h4096.json"
  [ "${TRAIN_RUNS:-both}" = all ] || [ -n "${TRAIN_ARGS:-}" ] && return
  # the loss again at a reduced size (hidden 2048, 4 layers) and the default learning rate
  run 180 python3 examples/train_llama.py --model builtin --layers 4 --steps 300 \
    --json "$OUT/train_h2048.json"
}

v_vtest() { # FILE
  local file=${1:?vtest needs a variants file} name rest lib
  while read -r name rest; do
    case $name in ''|'#'*) continue ;; esac
    lib=$(sed -n 's/.*lib=\([^ ]*\).*/\1/p' <<< "$rest")
    [ -n "$lib" ] || continue
    log "--- $name ($lib)"
    run 600 env BLOCKSCALE_LIB="$PWD/$lib" python3 -m pytest -x -q -p no:cacheprovider \
      ${PYTEST_ARGS:-test/gpu/test_grouped.py} -s < /dev/null
  done < "$file"
}

v_ab() { # [FILE] [flags]: FILE is a variants file unless it starts with '-'
  local file=bench/variants/rebuild.txt
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then file=$1; shift; fi
  run 560 python3 bench/ab.py --variants "$file" --rounds 2 --casts --json "$OUT/ab.json" "$@"
}

PROFILE_SHAPES=${PROFILE_SHAPES:-fwd:4096x7168x16384,fwd:16384x14336x4096,fwd:4096x2112x7168,fwd:4096x24576x1536,fwd:128x7168x16384,wgrad:14336x4096x16384:f32}
v_profile() { # [FILE]
  local file=${1:-bench/variants/rebuild.txt} name rest lib dg="" sums=() calls=3
  setup_deepgemm
  while read -r name rest; do
    case $name in ''|'#'*) continue ;; esac
    lib=$(sed -n 's/.*lib=\([^ ]*\).*/\1/p' <<< "$rest")
    run 300 env ${lib:+BLOCKSCALE_LIB=$PWD/$lib} ncu --profile-from-start off --csv \
      --metrics gpu__time_duration.sum --log-file "$OUT/profile_$name.csv" \
      python3 bench/profile_pair.py --shape "$PROFILE_SHAPES" --calls $calls $dg || continue
    sums+=("$name=$OUT/profile_$name.csv")
    dg=--no-deepgemm  # (DeepGEMM's kernels once, beside the first build)
  done < "$file"
  run 60 python3 bench/profile_pair.py --shape "$PROFILE_SHAPES" --calls $calls --summarize "${sums[@]}"
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
skip=0
for v in "$@"; do  # every verb known before any device time is spent
  [ "$skip" = 1 ] && { skip=0; [ -f "$v" ] && continue
    echo "gpu-check: vtest needs a variants file but got '$v'" >&2; exit 2; }
  case $v in
    smoke|sweep|casts|wheel|python|grouped|kgrouped|gbench|gprofile|kbench|bench|qbench|jit|linear|inference|train|multigpu|all) ;;
    vtest) skip=1 ;;
    ab|profile) break ;;
    *) echo "gpu-check: unknown verb '$v'" >&2; usage >&2; exit 2 ;;
  esac
done
[ "$skip" = 1 ] && { echo "gpu-check: vtest needs a variants file" >&2; exit 2; }
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
    vtest) v_vtest "$1"; shift ;;
    profile) v_profile "$@"; set -- ;;
    all) v_smoke; v_sweep; v_casts; v_python; v_bench ;;
    *) "v_$v" ;;
  esac
done
log "gpu-check $verbs: $FAILS failure(s)"
[ "$FAILS" = 0 ]
