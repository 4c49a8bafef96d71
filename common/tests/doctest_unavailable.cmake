# Configures a one-line project that includes cmake/find_or_fetch_doctest.cmake with doctest
# hidden from find_package() and a download address that cannot work, and checks that
# configuration stops with exit code 1 and the one error that names the ways to get doctest.
# Usage: cmake -DMODULE=<find_or_fetch_doctest.cmake> -DWORK_DIR=<scratch folder> -P doctest_unavailable.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(WRITE "${WORK_DIR}/source/CMakeLists.txt"
     "cmake_minimum_required(VERSION 3.25)\nproject(doctest_unavailable LANGUAGES NONE)\ninclude(\"${MODULE}\")\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${WORK_DIR}/source" -B "${WORK_DIR}/build"
                        -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON "-DWORKLOG_DOCTEST_URL=file://${WORK_DIR}/no-such-archive.tar.gz"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCHALL "CMake Error" errors "${err}")
list(LENGTH errors error_count)
set(expected
  "The tests need doctest: it is not installed, and downloading it from"
  "apt-get update && apt-get install doctest-dev"
  "-Ddoctest_DIR="
  "-DFETCHCONTENT_SOURCE_DIR_DOCTEST="
  "-DWORKLOG_TESTS=OFF"
  "cmake --preset default -Ddoctest_DIR="
  "cmake --workflow takes no -D")
string(REGEX REPLACE "[ \n]+" " " err_one_line "${err}")  # CMake wraps the message
set(missing "")
foreach(text IN LISTS expected)
  string(FIND "${err_one_line}" "${text}" at)
  if(at EQUAL -1)
    list(APPEND missing "'${text}'")
  endif()
endforeach()
if(NOT code EQUAL 1 OR NOT error_count EQUAL 1 OR missing)
  message(FATAL_ERROR "expected exit 1 and one error naming the ways to get doctest; got exit ${code}, "
                      "${error_count} error(s), missing ${missing}:\n${err}")
endif()
message("ok: exit ${code}, one error:\n${err}")
