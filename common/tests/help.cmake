# Every shipped executable answers --help: exit 0, its usage on stdout, nothing on stderr, and no
# GPU needed (it runs on CI). Usage:
#   cmake "-DEXES=<executable>|<executable>|..." -P help.cmake
# A step executable's usage starts "usage: <its name>"; the doctest programs print doctest's.
string(REPLACE "|" ";" exes "${EXES}")
set(failures 0)
foreach(exe IN LISTS exes)
  get_filename_component(name "${exe}" NAME)
  execute_process(COMMAND ${exe} --help RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(name MATCHES "_tests$")
    set(expected "^(usage: ${name} .*)?\\[doctest\\]")
  else()
    set(expected "^usage: ${name} ")
  endif()
  if(NOT code STREQUAL "0" OR NOT out MATCHES "${expected}" OR NOT err STREQUAL "")
    string(SUBSTRING "${out}" 0 200 start)
    message("FAIL: ${name} --help: expected exit 0 and stdout matching '${expected}', nothing on stderr;\n"
            "  got exit ${code}, stdout '${start}...', stderr '${err}'")
    math(EXPR failures "${failures} + 1")
  else()
    string(REGEX MATCH "^[^\n]*" first "${out}")
    message("ok: ${name} --help: ${first}")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} executable(s) do not answer --help")
endif()
