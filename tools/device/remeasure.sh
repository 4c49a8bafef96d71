#!/usr/bin/env bash
# The experiments the lessons and notes pages cite, measured again on the build of tools/device/build.sh,
# each by the command tools/device/README.md names for its CSV, into OUT/csv/NAME.csv (copy them over
# plots/results/, then fingerprints.py --stamp and filler.py --write).
#   OUT=DIR bash tools/device/remeasure.sh PHASE...
# Phases (each fits one 10-minute call on an H200):
#   steps     the files of step-executable rows (remeasure.py), the torch rows beside them, the chain
#   variants  the variant tables of 07-10 (record_variants.py) and their profile (ncu_profile.py)
#   timing    timing_validation.csv (validate_timing.py) and cublas_picks.csv (cublas_pick.py)
#   counters  the Nsight Compute counters and tool outputs of the hand-made tables, raw, into OUT/raw/
#             (tools/device/tables.py turns them into tile_limits, tile_counters, small_counters,
#             tile_model and the rows of experiments.csv that the pages cite)
# Each command's wall time goes to OUT/times.txt. Exit code 1 when a command failed (the rest still runs).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/remeasure}
csv=$out/csv
mkdir -p "$csv" "$out/tmp"
failed=0
timed() {  # timed NAME COMMAND...: runs it, logs to OUT/NAME.log, its wall time and exit to OUT/times.txt
  local name=$1 start=$SECONDS code
  shift
  "$@" > "$out/$name.log" 2>&1
  code=$?
  echo "$name: exit $code, $((SECONDS - start)) s" | tee -a "$out/times.txt"
  [ "$code" -eq 0 ] || failed=1
}
without() {  # without FILE PATTERN: a copy of plots/results/FILE.csv without the rows whose step matches PATTERN
  python3 - "plots/results/$1.csv" "$out/tmp/$1.csv" "$2" <<'PY'
import csv, re, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(r for r in rows if not re.search(sys.argv[3], r["step"]))
PY
  echo "$out/tmp/$1.csv"
}
shapes_of() {  # shapes_of FILE: the distinct MxNxK of plots/results/FILE.csv, one a line, in order
  python3 - "plots/results/$1.csv" <<'PY'
import csv, sys
seen = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    seen.setdefault(f"{r['m']}x{r['n']}x{r['k']}", None)
print("\n".join(seen))
PY
}
remeasure() { python3 plots/run/remeasure.py --bin-dir build/bin --out "$csv" "$@"; }

for phase in "$@"; do
  case "$phase" in
    steps)
      for name in split_k targets pad_rules pad_targets small_problems tile_thin tile_per_shape \
                  swap_ab_variants swap_ab_schedules swap_ab_cluster swap_ab_narrow; do
        timed "$name" remeasure "plots/results/$name.csv"
      done
      timed swap_ab_narrow_whole remeasure "$(without swap_ab_narrow_whole '@')"
      timed swap_ab_wide remeasure "$(without swap_ab_wide 'wide_tiles')"
      timed decode remeasure --warmup 1 --iters 10 plots/results/decode.csv
      shapes_of decode > "$out/tmp/decode_shapes.txt"
      timed decode_torch python3 plots/shapes/peers.py --engine torch --shapes "$out/tmp/decode_shapes.txt" \
        --csv "$csv/decode_torch.csv"
      timed both_orientations remeasure "$(without both_orientations 'torch')"
      timed both_orientations_torch python3 plots/shapes/peers.py --engine torch \
        --shapes plots/results/both_orientations_shapes.txt --csv "$out/tmp/both_orientations_torch.csv"
      # As the committed file has it: each row's category, 15 and best_of_menu in one process, the torch rows.
      python3 - "$csv/both_orientations.csv" "$out/tmp/both_orientations_torch.csv" <<'PY'
import csv, sys
with open("plots/results/both_orientations.csv", newline="") as f:
    category = {(r["m"], r["n"], r["k"]): r["category"] for r in csv.DictReader(f)}
rows = []
for path in sys.argv[1:]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames)
        rows += list(reader)
fields.insert(fields.index("code"), "category")
seen, kept = set(), []
for r in rows:
    key = (r["step"], r["m"], r["n"], r["k"])
    if r["step"] in ("15_tile_per_shape", "16_both_orientations/best_of_menu") and key in seen:
        continue
    seen.add(key)
    r["category"] = category[(r["m"], r["n"], r["k"])]
    kept.append(r)
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(kept)
PY
      for m in 1 16 128; do
        for p in 1 2 3; do
          timed "chain_m${m}_p$p" build/bin/chain --m "$m" --csv "$csv/chain.csv" --timeline "$csv/chain_timeline.csv"
        done
      done
      ;;
    variants)
      timed technique_variants python3 plots/run/record_variants.py --bin-dir build/bin \
        --tables 07_async_pipeline,08_mma_ldmatrix,09_wgmma_tma,10_persistent_clusters --out "$csv/technique_variants.csv"
      timed variant_profile python3 plots/profiling/ncu_profile.py --bin-dir build/bin --out "$out/variant_profile" \
        --variants "$(tail -n +2 plots/results/variant_profile.csv | cut -d, -f1 | paste -sd,)"
      ;;
    timing)
      timed timing_default python3 plots/run/validate_timing.py --bin-dir build/bin --out "$out/timing_default"
      timed timing_more python3 plots/run/validate_timing.py --bin-dir build/bin --out "$out/timing_more" \
        --shapes "$(tail -n 14 plots/results/timing_validation.csv | awk -F, '{print $4 "x" $5 "x" $6}' | paste -sd,)"
      shapes_of cublas_picks > "$out/tmp/picks_shapes.txt"
      timed cublas_picks python3 plots/shapes/cublas_pick.py --bin-dir build/bin --out "$out/cublas_picks" \
        --shape-file "$out/tmp/picks_shapes.txt"
      ;;
    counters)
      raw=$out/raw
      mkdir -p "$raw"
      nvidia-smi --query-gpu=name --format=csv,noheader | head -1 > "$raw/gpu.txt"
      date -u +%F > "$raw/date.txt"
      ncu=$(command -v ncu || echo "$(dirname "$(command -v nvcc)")/ncu")
      metrics=gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y
      metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed
      metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
      metrics+=,sm__cycles_active.avg,sm__cycles_elapsed.max,lts__t_bytes.sum,dram__bytes_read.sum,dram__sectors_read.sum
      metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum,smsp__inst_executed.sum
      profile() {  # profile NAME STEP[/VARIANT] MxNxK step|cublas: one launch under ncu, its kernels' counters as CSV
        local name=$1 step=${2%%/*} variant= m n k
        [[ "$2" == */* ]] && variant=${2#*/}
        IFS=x read -r m n k <<< "$3"
        timed "ncu_$name" "$ncu" --profile-from-start off --clock-control none --cache-control all --metrics "$metrics" \
          --export "$raw/$name" --force-overwrite "build/bin/$step" --m "$m" --n "$n" --k "$k" --profile "$4" \
          ${variant:+--variant "$variant"}
        "$ncu" --import "$raw/$name.ncu-rep" --csv --page raw --print-units base --print-kernel-base demangled \
          > "$raw/$name.csv" 2>> "$out/ncu_$name.log"
        rm -f "$raw/$name.ncu-rep"
      }
      # Each run's name: TABLE@STEP[~VARIANT]@MxNxK@TARGET, which tables.py reads back.
      for s in 1024x1024x1024 128x4096x4096 16x4096x4096 1x128x131072 2056x2056x2056 784x512x4608; do
        profile "tile_limits@15_tile_per_shape@$s@step" 15_tile_per_shape "$s" step
        profile "tile_limits@cuBLAS@$s@cublas" 15_tile_per_shape "$s" cublas
      done
      for s in 1024x1024x1024 3080x3080x3080 802816x64x576; do
        for step in 14_pad_unaligned 15_tile_per_shape; do profile "tile_counters@$step@$s@step" "$step" "$s" step; done
      done
      for s in 100x100x100 128x128x128 255x257x129 512x512x512 512x64x512; do
        for step in 14_pad_unaligned 15_tile_per_shape; do profile "small_counters@$step@$s@step" "$step" "$s" step; done
        profile "small_counters@cuBLAS@$s@cublas" 15_tile_per_shape "$s" cublas
      done
      for v in menu_128x192_c1 swap_128x128; do
        profile "ncu_dram_llm_m256@16_both_orientations~$v@256x4096x11008@step" "16_both_orientations/$v" 256x4096x11008 step
      done
      profile "ncu_gate_up_sectors@13_swap_ab@1x28672x4096@step" 13_swap_ab 1x28672x4096 step
      profile "ncu_gate_up_sectors@13_swap_ab~narrow_tiles@1x28672x4096@step" 13_swap_ab/narrow_tiles 1x28672x4096 step
      profile "ncu_gate_up_sectors@cuBLAS@1x28672x4096@cublas" 13_swap_ab 1x28672x4096 cublas
      for s in 4097x4097x4097 4097x4097x4096 2048x50257x768 999x999x999; do
        profile "copy_share@14_pad_unaligned@$s@step" 14_pad_unaligned "$s" step
      done
      for s in 16x4096x4096 16x128x64; do profile "ncu_swap_ab@13_swap_ab@$s@step" 13_swap_ab "$s" step; done
      profile "ncu_swap_ab@cuBLAS@16x4096x4096@cublas" 13_swap_ab 16x4096x4096 cublas
      timed one_process_each build/bin/06_multiwarp_wmma --m 8192 --n 8192 --k 8192 --csv "$raw/one_process_each.csv"
      # The tools, as they print.
      explain=()
      while read -r s; do explain+=(--explain "$s"); done < <(shapes_of tile_model)
      timed tile_model build/bin/15_tile_per_shape_calibrate "${explain[@]}"
      cp "$out/tile_model.log" "$raw/tile_model@15_tile_per_shape.txt"
      timed edges_4096 build/bin/16_both_orientations_calibrate --explain 4096x4096x4096 --explain 4097x4104x4104
      cp "$out/edges_4096.log" "$raw/edges_4096@16_both_orientations.txt"
      timed dram_copy build/bin/dram_copy
      cp "$out/dram_copy.log" "$raw/dram_copy.txt"
      timed mma_peak build/bin/mma_peak
      cp "$out/mma_peak.log" "$raw/mma_peak.txt"
      printf '1024x1024x1024\n1024x1024x4096\n1024x1024x8192\n' > "$out/tmp/slice_shapes.txt"
      for p in 1 2 3; do
        timed "slice_cost_p$p" build/bin/16_both_orientations --variant menu_64x128_c1 --shapes "$out/tmp/slice_shapes.txt" \
          --warmup 2 --iters 10 --csv "$raw/slice_cost_1024.csv"
      done
      ;;
    *) echo "remeasure.sh: error: unknown phase '$phase' (steps, variants, timing, counters)" >&2; exit 2 ;;
  esac
done
exit $failed
