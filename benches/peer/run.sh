#!/usr/bin/env bash
# run.sh: devseq's benchmark and the CUB/Thrust peer on this machine's GPU, then the ratio table.
#
#   benches/peer/run.sh [options] [FILTER...]
#
#   --arch sm_XX   the peer's GPU architecture (default: $PEER_ARCH, else the GPU's compute
#                  capability as nvidia-smi reports it, else sm_90)
#   --out DIR      where the outputs go (default: target/peer)
#   --runs N       run both sides N times in a row; the table gives medians (default 1)
#   --chart        also redraw docs/images/ratios.svg from the table
#   FILTER...      substrings of line names, passed to the crate's bench (e.g. sort_ scan);
#                  the peer always runs every line
#
# Needs: an NVIDIA GPU with its driver, a CUDA toolkit with nvcc and cuRAND (the numbers in
# docs/performance.md come from CUDA 13.0, whose CUB/Thrust is CCCL 3.0.1; another toolkit
# builds another peer), cargo and python3 (standard library only).
# Environment: NVCC (the nvcc to use, else the one on PATH, else $CUDA_HOME/bin/nvcc, else
# /usr/local/cuda/bin/nvcc), NVCC_FLAGS (extra flags, e.g. -I/-L for a toolkit unpacked from
# NVIDIA's pip wheels: NVCC_FLAGS="-L$CUDA/lib"), PEER_ARCH (as --arch).
# Both sides run on the first GPU that CUDA sees (set CUDA_VISIBLE_DEVICES to pick another).
#
# Outputs in DIR: bench-I.txt (the crate's lines, run I), peer-I.txt (the peer's lines),
# compare.txt (the table), cub_bench-ARCH (the peer's binary, rebuilt when cub_bench.cu changes).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
die() { echo "run.sh: $*" >&2; exit 1; }

arch=${PEER_ARCH:-}
out=$root/target/peer
runs=1
chart=0
filters=()
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || die "--arch needs a value (e.g. sm_90)"; arch=$2; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --runs) [ $# -ge 2 ] || die "--runs needs a number"; runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    --chart) chart=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) filters+=("$1"); shift ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs wants a positive number, not '$runs'"

# The GPU.
command -v nvidia-smi >/dev/null 2>&1 \
  || die "nvidia-smi not found: this needs an NVIDIA GPU and its driver"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
[ -n "$gpu" ] || die "nvidia-smi lists no GPU (is the driver loaded? does this container see the GPU?)"
if [ -z "$arch" ]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .' || true)
  if [[ $cap =~ ^[0-9]+$ ]]; then arch=sm_$cap; else arch=sm_90; fi
fi
[[ $arch =~ ^sm_[0-9]+[a-z]?$ ]] || die "--arch wants a form like sm_90, not '$arch'"

# The tools.
nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  for c in "$(command -v nvcc 2>/dev/null || true)" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" /usr/local/cuda/bin/nvcc; do
    if [ -n "$c" ] && [ -x "$c" ]; then nvcc=$c; break; fi
  done
fi
[ -n "$nvcc" ] && [ -x "$nvcc" ] || die "nvcc not found: install a CUDA toolkit, put its bin/ on PATH, or set NVCC=/path/to/nvcc"
command -v cargo >/dev/null 2>&1 || die "cargo not found (https://rustup.rs)"
command -v python3 >/dev/null 2>&1 || die "python3 not found"

mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "run.sh: $gpu, peer built for $arch with $nvcc; outputs in $out" >&2

# The peer: built once for each architecture, again when its source changes.
peer=$out/cub_bench-$arch
if [ ! -x "$peer" ] || [ "$here/cub_bench.cu" -nt "$peer" ]; then
  echo "run.sh: building the peer (nvcc takes a minute or two)" >&2
  # shellcheck disable=SC2086 # NVCC_FLAGS is a list of flags
  "$nvcc" -O3 -std=c++17 -arch="$arch" --extended-lambda "$here/cub_bench.cu" -o "$peer.tmp" \
      -lcurand ${NVCC_FLAGS:-} \
    || die "the peer did not build. With a toolkit from NVIDIA's pip wheels, point nvcc at its
  libraries, e.g. NVCC_FLAGS=\"-L\$CUDA/lib\" (and -I\$CUDA/include if cub/ or curand.h is not found)"
  mv "$peer.tmp" "$peer"
fi
# cuRAND (and cudart, where it is not linked statically) are found beside nvcc at run time.
toolkit=$(cd "$(dirname "$nvcc")/.." && pwd)
for d in "$toolkit/lib64" "$toolkit/lib"; do
  if [ -d "$d" ]; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
done

# Both sides, run after run; the crate's bench is built (release) by the first cargo bench.
export DEVSEQ_DEVICE=${DEVSEQ_DEVICE:-cuda}
benches=() peers=()
for i in $(seq 1 "$runs"); do
  echo "run.sh: run $i of $runs: the crate (cargo bench --bench primitives)" >&2
  (cd "$root" && cargo bench --bench primitives -- ${filters[@]+"${filters[@]}"}) >"$out/bench-$i.txt" \
    || die "the crate's bench failed (its output so far: $out/bench-$i.txt)"
  echo "run.sh: run $i of $runs: the peer" >&2
  "$peer" >"$out/peer-$i.txt" || die "the peer failed (its output so far: $out/peer-$i.txt)"
  benches+=("$out/bench-$i.txt")
  peers+=(--peer "$out/peer-$i.txt")
done

python3 "$here/compare.py" "${benches[@]}" "${peers[@]}" | tee "$out/compare.txt"

if [ "$chart" = 1 ]; then
  note="One run."
  if [ "$runs" -gt 1 ]; then note="Median of $runs runs."; fi
  python3 "$here/chart.py" "$out/compare.txt" -o "$root/docs/images/ratios.svg" \
    --gpu "$gpu" --date "$(date +%F)" --note "$note"
fi
