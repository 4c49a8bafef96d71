# The programs steps ship beside their executables (13's chain, 15's calibrate, tools/ dram_copy) refuse
# a bad command line the same way (common/tool_cli.hpp): exit 2 (exit_bad_argument), nothing on
# stdout, one line on stderr that names the argument. No GPU needed: arguments are read before the
# device is asked for. Usage:
#   cmake -DCHAIN=<exe> -DDRAM_COPY=<exe> -DCALIBRATE=<exe> -P tool_arguments.cmake
set(failures 0)
function(expect_refusal exe expected)
  get_filename_component(name "${exe}" NAME)
  execute_process(COMMAND ${exe} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(JOIN " " shown ${ARGN})
  if(NOT code STREQUAL "2" OR NOT out STREQUAL "" OR NOT err MATCHES "^${name}: error: ${expected}\n$")
    message("FAIL: ${name} ${shown}: expected exit 2, no output, stderr '${name}: error: ${expected}';\n"
            "  got exit ${code}, stdout '${out}', stderr '${err}'")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
  else()
    message("ok: ${name} ${shown}: ${err}")
  endif()
endfunction()

expect_refusal(${CHAIN} "--m takes a whole number from 1 to 128, got '0'" --m 0)
expect_refusal(${CHAIN} "--layers takes a whole number from 1 to 64, got '3x'" --layers 3x)
expect_refusal(${CHAIN} "unknown argument '--bogus' \\(see --help\\)" --bogus)
expect_refusal(${CHAIN} "unknown argument '--m' without its value \\(see --help\\)" --m)
expect_refusal(${CHAIN} "unknown argument '--timeline' without its value \\(see --help\\)" --timeline)
expect_refusal(${DRAM_COPY} "--mib takes a whole number from 1 to 65536, got '70000'" --mib 70000)
expect_refusal(${DRAM_COPY} "--shape takes MxNxK with positive whole numbers, got '16x4096'" --shape 16x4096)
expect_refusal(${CALIBRATE} "--iters takes a whole number from 1 to 1000, got 'x'" --iters x)
expect_refusal(${CALIBRATE} "--explain takes MxNxK with positive whole numbers, got '0x1x1'" --explain 0x1x1)
expect_refusal(${CALIBRATE} "unknown argument '--out' without its value \\(see --help\\)" --out)
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} bad command line(s) not refused as documented")
endif()
