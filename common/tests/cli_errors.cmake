# Runs a step executable with each kind of bad command line and checks its exit code and its
# one-line message on stderr. Usage:
#   cmake -DEXE=<step executable> -DSTEP=<step name> -DGROUP=host|gpu -DFIXTURES=<this folder's fixtures/>
#         -P cli_errors.cmake
# GROUP host: mistakes found while parsing, before any GPU is touched (these run on CI).
# GROUP gpu: mistakes that only the device can reveal; prints "SKIPPED:" without a GPU.
# Each row: expected exit code | expected stderr (a regular expression, after "<step>: error: ") |
# arguments, separated by spaces (a ";" would split the row: CMake lists are ";"-separated);
# @FIXTURES@ stands for the fixtures folder.
set(host_rows
  "2|unknown argument '--bogus' \\(see --help\\)|--bogus"
  "2|--m needs a value|--m"
  "2|--m expects a positive integer \\(got 'abc'\\)|--m abc"
  "2|--k must be at least 1 \\(got '0'\\)|--k 0"
  "2|--n must be at least 1 \\(got '-3'\\)|--n -3"
  "2|--m must be at most 2147483647 \\(got '2147483648'\\)|--m 2147483648"
  "2|--iters must be at least 1 \\(got '0'\\)|--iters 0"
  "2|--alpha expects a number \\(got 'one'\\)|--alpha one"
  "2|--device must be at least 0 \\(got '-1'\\)|--device -1"
  "2|cannot open --csv file '/nonexistent-dir/x.csv'|--csv /nonexistent-dir/x.csv"
  "2|--initial-c nan needs --beta 0|--initial-c nan --beta 0.5"
  "2|--profile expects 'step' or 'cublas' \\(got 'all'\\)|--profile all"
  "2|--profile cannot be combined with --csv|--profile step --csv x.csv"
  "2|--shapes cannot be combined with --m, --n or --k|--shapes s.txt --m 64"
  "2|--time-cap must be positive and finite \\(got '0'\\)|--time-cap 0"
  "2|cannot open --shapes file '/nonexistent-dir/s.txt': No such file or directory|--shapes /nonexistent-dir/s.txt"
  "2|@FIXTURES@/bad_shapes.txt:3: N expects a positive integer \\(got '4096 '\\)|--shapes @FIXTURES@/bad_shapes.txt")
set(gpu_rows
  "3|200000x200000x200000 needs [0-9]+ bytes of device memory \\(\\+256 MiB headroom\\), [0-9]+ bytes are free|--m 200000 --n 200000 --k 200000"
  "3|2147483647x2147483647x2147483647 needs over 2\\^64 bytes|--m 2147483647 --n 2147483647 --k 2147483647"
  "2|--device 99 does not exist: [0-9]+ CUDA device\\(s\\), numbered from 0|--device 99")

if(GROUP STREQUAL "gpu")
  execute_process(COMMAND ${EXE} --m 1 --n 1 --k 1 --warmup 0 --iters 1 --no-cublas RESULT_VARIABLE probe OUTPUT_QUIET ERROR_QUIET)
  if(probe EQUAL 77)
    message("SKIPPED: no CUDA device")
    return()
  endif()
  set(rows ${gpu_rows})
else()
  set(rows ${host_rows})
endif()

set(failures 0)
foreach(row IN LISTS rows)
  string(REPLACE "|" ";" fields "${row}")
  list(GET fields 0 expected_code)
  list(GET fields 1 expected_message)
  list(GET fields 2 arg_string)
  string(REPLACE "@FIXTURES@" "${FIXTURES}" arg_string "${arg_string}")
  string(REPLACE "@FIXTURES@" "${FIXTURES}" expected_message "${expected_message}")
  separate_arguments(args UNIX_COMMAND "${arg_string}")
  execute_process(COMMAND ${EXE} ${args} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  ERROR_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines extra_lines)
  if(NOT code STREQUAL expected_code OR NOT err MATCHES "^${STEP}: error: ${expected_message}" OR extra_lines GREATER 0)
    message("FAIL: ${STEP} ${args}\n  expected exit ${expected_code} and one line '${STEP}: error: ${expected_message}'\n  got exit ${code}: '${err}'")
    math(EXPR failures "${failures} + 1")
  else()
    message("ok: ${STEP} ${args} -> exit ${code}: ${err}")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} bad-input case(s) failed")
endif()
