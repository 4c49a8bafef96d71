# skip_unless_step_runs(<step executable> <M> <N> <K>): included by the -P scripts of the tests that
# run a step on the GPU. Runs the step once, unchecked, at M×N×K; without a CUDA device (exit code
# 77) or on a GPU the step does not support (4) it prints "SKIPPED:" (CTest is told to report the
# test as skipped on that word) and returns from the including script.
macro(skip_unless_step_runs exe m n k)
  execute_process(COMMAND ${exe} --m ${m} --n ${n} --k ${k} --warmup 0 --iters 1 --no-cublas
                  RESULT_VARIABLE skip_probe OUTPUT_QUIET ERROR_QUIET)
  if(skip_probe EQUAL 77)
    message("SKIPPED: no CUDA device")
    return()
  endif()
  if(skip_probe EQUAL 4)
    message("SKIPPED: this GPU cannot run the step (unsupported GPU)")
    return()
  endif()
endmacro()
