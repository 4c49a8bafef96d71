#!/bin/bash
# Call 1: build, calibrate 15 on this GPU, rebuild 15 with its prices, 15's GPU and sanitizer tests.
set -u
R=$(pwd); [ "$R" = /work/main ] || ln -sfn "$R" /work/main; [ -e /usr/bin/cmake ] || ln -s $(command -v cmake) /usr/bin/cmake
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
t0=$(date +%s)
cmake -S . -B /tmp/bd -DCMAKE_BUILD_TYPE=Release -DWORKLOG_TESTS=ON -DWORKLOG_REQUIRE_GPU=OFF > $OUT/configure.log 2>&1
cmake --build /tmp/bd -j16 > $OUT/build.log 2>&1; echo "build rc=$? $(( $(date +%s)-t0 )) s"
grep -i "warning" $OUT/build.log | head -5
cd /tmp/bd && for f in $(find . -name CTestTestfile.cmake); do sed -i "s|COMPUTE_SANITIZER-NOTFOUND|$(command -v compute-sanitizer)|g" $f; done; cd "$R"
timeout 300 /tmp/bd/bin/15_both_orientations_calibrate --out 15_both_orientations/calibration.inc > $OUT/calibrate.log 2>&1; echo "calibrate rc=$? $(( $(date +%s)-t0 )) s"
cp 15_both_orientations/calibration.inc $OUT/calibration15.inc
cmake --build /tmp/bd -j16 --target 15_both_orientations gpu_tests 15_both_orientations_calibrate > $OUT/rebuild.log 2>&1; echo "rebuild rc=$? $(( $(date +%s)-t0 )) s"
cuobjdump -sass /tmp/bd/bin/15_both_orientations | grep -c HGMMA | sed 's/^/HGMMA in 15: /'
cuobjdump -res-usage /tmp/bd/bin/12_swap_ab 2>/dev/null | grep -o "STACK:[0-9]*" | sort | uniq -c | head -3
timeout 240 ctest --test-dir /tmp/bd -R "15_both|gpu\.(12|13|14)_|chain" -j12 --timeout 200 > $OUT/ctest15.log 2>&1; echo "ctest rc=$? $(( $(date +%s)-t0 )) s"
grep -E "tests passed|tests failed" $OUT/ctest15.log; grep -E "\*\*\*|Failed|Timeout" $OUT/ctest15.log | head -10
/tmp/bd/bin/15_both_orientations_calibrate --explain 1024x1024x1024 --explain 4097x4097x4097 --explain 256x4096x4096 --iters 5 > $OUT/explain.log 2>&1
tail -20 $OUT/calibrate.log
echo "total $(( $(date +%s)-t0 )) s"
