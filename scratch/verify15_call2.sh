#!/bin/bash
# Call 2 (after call 1's calibration.inc is committed): the full device suite, then 14, 15 and 15's
# best of menu on the corpus (scratch/shapes15.txt), 15 in three processes.
set -u
R=$(pwd); [ "$R" = /work/main ] || ln -sfn "$R" /work/main; [ -e /usr/bin/cmake ] || ln -s $(command -v cmake) /usr/bin/cmake
t0=$(date +%s)
cmake -S . -B /tmp/bd -DCMAKE_BUILD_TYPE=Release -DWORKLOG_TESTS=ON -DWORKLOG_REQUIRE_GPU=OFF > $OUT/configure.log 2>&1
cmake --build /tmp/bd -j16 > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"
for i in 1 2 3; do /tmp/bd/bin/15_both_orientations --shapes scratch/shapes15.txt --csv $OUT/both15.csv --warmup 2 --iters 10 --time-cap 100 > /dev/null 2>>$OUT/err.log; done
echo "15 x3 $(( $(date +%s)-t0 )) s"
/tmp/bd/bin/14_tile_per_shape --shapes scratch/shapes15.txt --csv $OUT/both15.csv --warmup 2 --iters 10 --time-cap 100 > /dev/null 2>>$OUT/err.log
/tmp/bd/bin/15_both_orientations --variant best_of_menu --shapes scratch/shapes15.txt --csv $OUT/both15.csv --warmup 2 --iters 10 --time-cap 100 > /dev/null 2>>$OUT/err.log
echo "measured $(( $(date +%s)-t0 )) s"
python3 - <<'PY'
import csv, math, os, collections
cat = {}
for line in open('scratch/shapes15_cat.csv'):
    c, m, n, k = line.strip().split(','); cat[(m, n, k)] = c
rows = list(csv.DictReader(open(os.environ['OUT'] + '/both15.csv')))
d = collections.defaultdict(list)
for r in rows: d[(r['step'], cat.get((r['m'], r['n'], r['k']), '?'))].append(float(r['pct_cublas']))
for (s, c), v in sorted(d.items()):
    print(f"{s:40s} {c:16s} n={len(v):3d} geomean {math.exp(sum(map(math.log, v))/len(v)):6.1f} min {min(v):6.1f}")
PY
