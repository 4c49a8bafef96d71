# On a machine without a usable CUDA device (CI), every program says why in words a reader can act
# on, and writes nothing. Usage:
#   cmake -DEXE=<step executable> -DSTEP=<its name> -DEXTRA=<a program of tools/, or empty> -DGPU_TESTS=<gpu_tests>
#         -DPYTHON=<python3 or empty> -DPROBE=<common/cuda_probe.py> -DWORK_DIR=<scratch> -P no_device.cmake
# Checks: the step exits 77 with one line "<step>: error: <reason>"; the reason never sends a reader
# to upgrade a driver they do not have (the runtime's "driver version is insufficient"); a --csv
# file is not created; a program of tools/ (mma_peak) and gpu_tests give the same reason; so does common/cuda_probe.py,
# which CMake asks at configure time for the worklog preset. Prints "SKIPPED:" where there is a device.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND ${EXE} --m 8 --n 8 --k 8 --warmup 0 --iters 1 --csv ${WORK_DIR}/results.csv
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err ERROR_STRIP_TRAILING_WHITESPACE)
if(NOT code EQUAL 77)
  message("SKIPPED: ${STEP} found a CUDA device (exit ${code}): this test is for machines without one")
  return()
endif()
set(problems "")
if(NOT err MATCHES "^${STEP}: error: ([^\n]+)$")
  list(APPEND problems "expected one line '${STEP}: error: <reason>', got '${err}'")
endif()
set(reason "${CMAKE_MATCH_1}")
if(reason MATCHES "insufficient" OR NOT reason MATCHES "^(no NVIDIA driver found|the NVIDIA driver is too old|no CUDA device found|no usable CUDA device)")
  list(APPEND problems "the reason is not one of common/no_device.cpp's: '${reason}'")
endif()
if(EXISTS "${WORK_DIR}/results.csv")
  list(APPEND problems "--csv results.csv was created, though nothing was measured")
endif()
set(extra_name "")
if(EXTRA)
  execute_process(COMMAND ${EXTRA} RESULT_VARIABLE extra_code ERROR_VARIABLE extra_err ERROR_STRIP_TRAILING_WHITESPACE)
  get_filename_component(extra_name "${EXTRA}" NAME)
  if(NOT extra_code EQUAL 77 OR NOT extra_err STREQUAL "${extra_name}: error: ${reason}")
    list(APPEND problems "${extra_name}: expected exit 77 and '${extra_name}: error: ${reason}', got ${extra_code}: '${extra_err}'")
  endif()
endif()
execute_process(COMMAND ${GPU_TESTS} RESULT_VARIABLE tests_code OUTPUT_VARIABLE tests_out OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT tests_code EQUAL 77 OR NOT tests_out STREQUAL "${reason}: GPU tests skipped")
  list(APPEND problems "gpu_tests: expected exit 77 and '${reason}: GPU tests skipped', got ${tests_code}: '${tests_out}'")
endif()
if(PYTHON AND reason MATCHES "^(no NVIDIA driver found|no CUDA device found)")  # worded alike in both
  execute_process(COMMAND ${PYTHON} ${PROBE} RESULT_VARIABLE probe_code ERROR_VARIABLE probe_err
                  ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT probe_code EQUAL 77 OR NOT probe_err STREQUAL "${reason}")
    list(APPEND problems "cuda_probe.py: expected exit 77 and '${reason}', got ${probe_code}: '${probe_err}'")
  endif()
endif()
if(problems)
  string(REPLACE ";" "\n  " problems "${problems}")
  message(FATAL_ERROR "without a CUDA device:\n  ${problems}")
endif()
message("ok: exit 77, '${err}'; no --csv file; ${extra_name} gpu_tests cuda_probe.py say the same")
