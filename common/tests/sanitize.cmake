# Runs one step executable under one compute-sanitizer tool. Usage:
#   cmake -DSANITIZER=<path or empty> -DTOOL=memcheck|initcheck|racecheck|synccheck -DEXE=<step>
#         -DARGS=<step arguments, ;-separated> -P sanitize.cmake
# Prints "SKIPPED:" (CTest then reports the test as skipped) when there is no compute-sanitizer
# or no CUDA device, or a GPU the step does not support (its exit code 4). The step runs with --no-cublas, so only the worklog's own kernels execute.
if(NOT SANITIZER)
  message("SKIPPED: compute-sanitizer not found")
  return()
endif()
execute_process(COMMAND ${EXE} --m 1 --n 1 --k 1 --warmup 0 --iters 1 --no-cublas RESULT_VARIABLE probe OUTPUT_QUIET ERROR_QUIET)
if(probe EQUAL 77)
  message("SKIPPED: no CUDA device")
  return()
endif()
if(probe EQUAL 4)
  message("SKIPPED: this GPU cannot run the step (unsupported GPU)")
  return()
endif()
set(tool_args --tool ${TOOL})
if(TOOL STREQUAL "memcheck")
  list(APPEND tool_args --leak-check full)
endif()
execute_process(COMMAND ${SANITIZER} ${tool_args} --error-exitcode 99 ${EXE} ${ARGS} --no-cublas
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "compute-sanitizer ${TOOL} failed (exit ${code})")
endif()
if(NOT "${out}${err}" MATCHES "(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \\(0 errors, 0 warnings\\))")
  message(FATAL_ERROR "compute-sanitizer ${TOOL} did not report 0 errors")
endif()
