#!/bin/bash
# Call 2 (15's prices committed): 15 three times, 14, 15's best of menu and torch once, on the corpus.
set -u
R=$(pwd); [ "$R" = /work/main ] || ln -sfn "$R" /work/main; [ -e /usr/bin/cmake ] || ln -s $(command -v cmake) /usr/bin/cmake
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
cmake -S . -B /tmp/bd -DCMAKE_BUILD_TYPE=Release -DWORKLOG_TESTS=OFF -DWORKLOG_REQUIRE_GPU=OFF > $OUT/log.txt 2>&1
cmake --build /tmp/bd -j16 --target 14_tile_per_shape 15_both_orientations >> $OUT/log.txt 2>&1; echo "build rc=$? $(el) s"
S=scratch/shapes15.txt; A="--shapes $S --warmup 2 --iters 10 --time-cap 100"
run() { local name=$1; shift; timeout $(( 590 - $(el) )) "$@" > /dev/null 2>>$OUT/log.txt; echo "$name rc=$? $(el) s"; }
run 15a /tmp/bd/bin/15_both_orientations $A --csv $OUT/r15a.csv
run 14 /tmp/bd/bin/14_tile_per_shape $A --csv $OUT/r14.csv
run best /tmp/bd/bin/15_both_orientations --variant best_of_menu $A --csv $OUT/rbest.csv
run 15b /tmp/bd/bin/15_both_orientations $A --csv $OUT/r15b.csv
run torch python3 plots/shapes/peers.py --engine torch --shapes $S --warmup 2 --iters 10 --time-cap 100 --csv $OUT/rtorch.csv
run 15c /tmp/bd/bin/15_both_orientations $A --csv $OUT/r15c.csv
tail -3 $OUT/log.txt
