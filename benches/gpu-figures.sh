#!/usr/bin/env bash
# GPU figures on a machine with no Rust toolchain and no network. Build here:
#
#   cargo build --release && cargo bench --no-run
#   mkdir -p .carry && cp target/release/proxima .carry/ && strip .carry/proxima
#   cp "$(ls -t target/release/deps/sort-* | grep -v '\.d$' | head -1)" .carry/sort-bench
#   (cd .carry && apt-get download libvulkan1 libglvnd0 libgl1 libglx0 libegl1 libgles2 libopengl0)
#
# (the Vulkan loader, and the GL dispatch libraries NVIDIA's Vulkan driver links against:
# without them the loader finds the driver's manifest but cannot open the driver)
#
# then copy .carry/ and benches/ (this script, reference/cub_sort.cu) over and run
# `bash benches/gpu-figures.sh .carry OUT`.
# It unpacks the loader when none is installed, points the loader at the NVIDIA driver's
# manifest when that is where the driver lives, and writes into OUT: info.txt, the table
# and JSON and plot of `proxima bench gpu` (the hash at every size, with and without
# workgroup pair staging, and with timestamps around every pass; the sweep at 100k and 1M:
# its CPU twin takes minutes on millions of uniform bodies; at every size the three radix
# sorts, count-spine-scatter, look-back and 8-bit look-back), the radix sorts against
# lampshade's, the main job on the GPU and on the CPU twins, `proxima bench toi` and
# `bench penetration`, and where nvidia-smi is there
# the GPU's clock every 100 ms beside it all (clocks.csv). On an H100 the hash figures took
# two minutes and the pair staging A/B and the sort half a minute each (2026-11-26).
# Last, OUT.tar.gz holds all of OUT in one file. `bench gpu --methods hash` alone took
# 2.6 minutes on an H200 (2026-11-28).
set -euo pipefail
carry=${1:-.carry}
out=${2:-gpu-figures}
mkdir -p "$out"
for f in "$carry"/*.deb; do
    [ -e "$f" ] && dpkg -x "$f" /
done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then
    export VK_DRIVER_FILES=$icd
fi
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,power.draw \
        --format=csv -lms 100 >"$out/clocks.csv" 2>&1 &
    trap 'kill %1 2>/dev/null' EXIT
fi
"$carry/proxima" info | tee "$out/info.txt"
"$carry/proxima" bench gpu --methods hash --json "$out/bench-gpu.json" \
    --svg "$out/bench-gpu.svg" | tee "$out/bench-gpu.txt"
"$carry/proxima" bench gpu --bodies 100000,1000000 --methods sweep \
    --json "$out/bench-gpu-sweep.json" --svg "$out/bench-gpu-sweep.svg" \
    | tee "$out/bench-gpu-sweep.txt"
"$carry/proxima" bench gpu --bodies 1000000,4000000 --methods hash --no-pair-staging \
    --json "$out/bench-gpu-unstaged.json" --svg "$out/bench-gpu-unstaged.svg" \
    | tee "$out/bench-gpu-unstaged.txt"
# The engine's timestamps around every pass (the old way) against around each stage.
"$carry/proxima" bench gpu --bodies 10000,1000000,4000000 --methods hash --pass-timestamps \
    --depth-max-pairs 0 --json "$out/bench-gpu-pass-timestamps.json" \
    --svg "$out/bench-gpu-pass-timestamps.svg" | tee "$out/bench-gpu-pass-timestamps.txt"
# Shared compute passes (the engine's encoding) against a compute pass per dispatch.
"$carry/proxima" bench gpu --bodies 10000,100000,1000000,4000000 --methods hash \
    --pass-per-dispatch --depth-max-pairs 0 --json "$out/bench-gpu-pass-per-dispatch.json" \
    --svg "$out/bench-gpu-pass-per-dispatch.svg" | tee "$out/bench-gpu-pass-per-dispatch.txt"
if [ -x "$carry/sort-bench" ]; then
    "$carry/sort-bench" --bench --noplot --warm-up-time 1 --measurement-time 2 2>&1 \
        | grep -v '^$' | tee "$out/sort.txt"
fi
# NVIDIA's own radix sort (CUB) on the same pairs, where CUDA's compiler is on the machine:
# the hardware's reference for the sort's goal (benches/reference/cub_sort.cu).
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
if [ -n "$nvcc" ]; then
    "$nvcc" -O3 -arch=native -std=c++17 -o /tmp/cub_sort "$(dirname "$0")/reference/cub_sort.cu" \
        && /tmp/cub_sort | tee "$out/cub-sort.txt" || echo "cub_sort: not built or failed"
fi
# The main job on the GPU and on the CPU twins: stage timings per frame, the same state hash.
"$carry/proxima" run --report "$out/run-gpu.json" 2>&1 | tee "$out/run-gpu.txt"
"$carry/proxima" run --device cpu --report "$out/run-cpu.json" 2>&1 | tee "$out/run-cpu.txt"
# The exact CPU queries against parry3d-f64 on a machine that is likely quieter than the
# shared one they were built on (out-of-cache batches are sensitive to other tenants). The
# time of impact three times: at 8 vertices ours and parry's are a few percent apart (on
# the H100's host 0.93 and 0.97 of parry's time, 2026-11-27), and one run does not settle it.
"$carry/proxima" bench toi --rounds 15 --json "$out/bench-toi.json" --svg "$out/bench-toi.svg" \
    | tee "$out/bench-toi.txt"
for run in 2 3; do
    "$carry/proxima" bench toi --rounds 15 --json /dev/null --svg /dev/null \
        | tee -a "$out/bench-toi.txt"
done
"$carry/proxima" bench penetration --rounds 15 --kinds shallow,deep --json "$out/bench-penetration.json" \
    --svg "$out/bench-penetration.svg" | tee "$out/bench-penetration.txt"
# Everything in one archive beside the folder, for a machine that hands back few files.
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "figures in $out/ and $out.tar.gz"
