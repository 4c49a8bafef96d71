# Runs one step executable (or gpu_tests, for one step's case) under one compute-sanitizer tool. Usage:
#   cmake -DSANITIZER=<path or empty> -DTOOL=memcheck|initcheck|racecheck|synccheck -DEXE=<step>
#         -DARGS=<step arguments, ;-separated> [-DPROBE=<step, when EXE is not the step>]
#         [-DWITH_CUBLAS=ON] [-DKERNELS=<substring of kernel names>] -P sanitize.cmake
# Prints "SKIPPED:" (CTest then reports the test as skipped) when there is no compute-sanitizer
# or no CUDA device, or a GPU the step does not support (its exit code 4). The step runs with --no-cublas, so only the worklog's own kernels execute.
# -DWITH_CUBLAS=ON: EXE is a tool that checks itself against cuBLAS (13's chain) and takes no
# --no-cublas; cuBLAS's kernels then run under the tool too, unless -DKERNELS=<substring> limits
# the tool to the kernels whose names hold it.
if(NOT SANITIZER)
  message("SKIPPED: compute-sanitizer not found")
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/skip_unless_step_runs.cmake)
if(NOT PROBE)
  set(PROBE ${EXE})
endif()
skip_unless_step_runs(${PROBE} 1 1 1)
set(tool_args --tool ${TOOL})
if(KERNELS)
  list(APPEND tool_args --kernel-name kns=${KERNELS})
endif()
if(TOOL STREQUAL "memcheck")
  list(APPEND tool_args --leak-check full)
endif()
set(no_cublas --no-cublas)
if(WITH_CUBLAS)
  set(no_cublas)
endif()
execute_process(COMMAND ${SANITIZER} ${tool_args} --error-exitcode 99 ${EXE} ${ARGS} ${no_cublas}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "compute-sanitizer ${TOOL} failed (exit ${code})")
endif()
if(NOT "${out}${err}" MATCHES "(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \\(0 errors, 0 warnings\\))")
  message(FATAL_ERROR "compute-sanitizer ${TOOL} did not report 0 errors")
endif()
