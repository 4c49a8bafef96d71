#!/bin/bash
# Call 1: build, calibrate 15 on this GPU, rebuild 15 with its prices, GPU tests, 12's and 15's sanitizer tests.
set -u
R=$(pwd); [ "$R" = /work/main ] || ln -sfn "$R" /work/main; [ -e /usr/bin/cmake ] || ln -s $(command -v cmake) /usr/bin/cmake
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
t0=$(date +%s); el() { echo $(( $(date +%s)-t0 )); }
cmake -S . -B /tmp/bd -DCMAKE_BUILD_TYPE=Release -DWORKLOG_TESTS=ON -DWORKLOG_REQUIRE_GPU=OFF > $OUT/build.log 2>&1
cmake --build /tmp/bd -j16 >> $OUT/build.log 2>&1; echo "build rc=$? $(el) s"
grep -i "warning" $OUT/build.log | head -5
cd /tmp/bd && for f in $(find . -name CTestTestfile.cmake); do sed -i "s|COMPUTE_SANITIZER-NOTFOUND|$(command -v compute-sanitizer)|g" $f; done; cd "$R"
timeout 200 /tmp/bd/bin/15_both_orientations_calibrate --out 15_both_orientations/calibration.inc > $OUT/calibrate.log 2>&1; echo "calibrate rc=$? $(el) s"
cp 15_both_orientations/calibration.inc $OUT/calibration15.inc
cmake --build /tmp/bd -j16 >> $OUT/build.log 2>&1; echo "rebuild rc=$? $(el) s"
cuobjdump -sass /tmp/bd/bin/15_both_orientations | grep -c HGMMA | sed 's/^/HGMMA in 15: /'
cuobjdump -res-usage /tmp/bd/bin/15_both_orientations 2>/dev/null | grep -o "STACK:[0-9]*" | sort | uniq -c
left=$(( 560 - $(el) ))
timeout $left ctest --test-dir /tmp/bd -L gpu -R "gpu\.|cli\.errors_gpu" -j6 --timeout 240 > $OUT/ctest.log 2>&1; echo "ctest gpu rc=$? $(el) s"
grep -E "tests passed|tests failed" $OUT/ctest.log; grep -E "\*\*\*|Failed|Timeout" $OUT/ctest.log | head -12
left=$(( 585 - $(el) ))
[ $left -gt 30 ] && { timeout $left ctest --test-dir /tmp/bd -R "sanitize\..*(15_both|12_swap)" -j12 --timeout 200 > $OUT/ctest_san.log 2>&1; echo "ctest sanitize rc=$? $(el) s"; grep -E "tests passed|tests failed" $OUT/ctest_san.log; grep -E "\*\*\*|Failed|Timeout" $OUT/ctest_san.log | head -8; }
tail -22 $OUT/calibrate.log
echo "total $(el) s"
