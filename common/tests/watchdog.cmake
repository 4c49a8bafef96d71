# Runs the broken launch of the library's stream-K kernel (a barrier that never completes its
# phase) and checks that the watchdog stops it: exit code 5 (exit_cuda_error), the watchdog's one line naming the step, the
# barrier, the stage and the phase, and all of it within seconds. Usage:
#   cmake -DEXE=<stream_k_broken> -P watchdog.cmake
# Prints "SKIPPED:" without a CUDA device or on a GPU other than Hopper (exit codes 77 and 4).
include(${CMAKE_CURRENT_LIST_DIR}/skip_unless_step_runs.cmake)
skip_unless_step_runs(${EXE} 64 64 64)
string(TIMESTAMP started "%s")
# K = 1024: 16 slices for 4 stages, so the producer must wait for stages the consumers release.
execute_process(COMMAND ${EXE} --m 256 --n 256 --k 1024 --warmup 0 --iters 1 --no-cublas
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
string(TIMESTAMP finished "%s")
math(EXPR seconds "${finished} - ${started}")
message("${out}${err}(exit ${code}, ${seconds} s)")
if(NOT code EQUAL 5)
  message(FATAL_ERROR "expected exit code 5 (CUDA error: the watchdog's trap), got '${code}'")
endif()
if(NOT "${out}${err}" MATCHES "11_split_k: watchdog: a producer thread \\(block [0-9]+, thread 0\\) waited over [0-9]+ cycles on empty\\[[0-3]\\] for its phase of parity [01]: the stage was never released")
  message(FATAL_ERROR "the watchdog's message is missing")
endif()
if(seconds GREATER 15)
  message(FATAL_ERROR "the watchdog took ${seconds} s to stop the kernel")
endif()
