# doctest for the C++ tests, as the target doctest::doctest: an installed doctest 2.4 when
# find_package() finds one, else the official 2.4.12 release, downloaded once into the build tree
# (${FETCHCONTENT_BASE_DIR}, by default <build>/_deps). When neither works, configuration stops
# with one error that names the ways to get it.
include(FetchContent)

set(doctest_release 2.4.12)
set(WORKLOG_DOCTEST_URL "https://github.com/doctest/doctest/archive/refs/tags/v${doctest_release}.tar.gz"
    CACHE STRING "Where to download the doctest ${doctest_release} release archive when doctest is not installed (a mirror of that file will do)")
set(doctest_archive_sha256 73381c7aa4dee704bd935609668cf41880ea7f19fa0504a200e13b74999c2d70)
set(doctest_archive "${FETCHCONTENT_BASE_DIR}/downloads/doctest-${doctest_release}.tar.gz")

get_filename_component(doctest_download_dir "${doctest_archive}" DIRECTORY)
get_filename_component(doctest_archive_name "${doctest_archive}" NAME)
FetchContent_Declare(doctest
  URL "${WORKLOG_DOCTEST_URL}"
  URL_HASH SHA256=${doctest_archive_sha256}
  DOWNLOAD_DIR "${doctest_download_dir}"
  DOWNLOAD_NAME "${doctest_archive_name}"
  DOWNLOAD_EXTRACT_TIMESTAMP TRUE
  # Only the header is used: a SOURCE_SUBDIR without a CMakeLists.txt keeps doctest's own project
  # (its options, examples and install rules) out of this build.
  SOURCE_SUBDIR header-only
  FIND_PACKAGE_ARGS 2.4 CONFIG QUIET)

# FetchContent_MakeAvailable() below tries find_package() first and downloads only when that finds
# nothing. Its own download retries for over a minute and then fails with a page of log, so the same
# question is asked here first, and when a download is needed it is made here, with a short
# timeout and one clear error; FetchContent then finds the archive, hash checked, in its
# DOWNLOAD_DIR and does not fetch it again (nor on later configurations: no network needed then).
find_package(doctest 2.4 CONFIG QUIET)
if(NOT doctest_FOUND AND NOT FETCHCONTENT_SOURCE_DIR_DOCTEST)
  set(doctest_archive_ok FALSE)
  if(EXISTS "${doctest_archive}")
    file(SHA256 "${doctest_archive}" doctest_archive_actual_sha256)
    if(doctest_archive_actual_sha256 STREQUAL doctest_archive_sha256)
      set(doctest_archive_ok TRUE)
    endif()
  endif()
  if(NOT doctest_archive_ok)
    message(STATUS "doctest is not installed: downloading release ${doctest_release} from ${WORKLOG_DOCTEST_URL}")
    file(DOWNLOAD "${WORKLOG_DOCTEST_URL}" "${doctest_archive}" TIMEOUT 120 INACTIVITY_TIMEOUT 30
         STATUS doctest_download_status)
    list(GET doctest_download_status 0 doctest_download_code)
    list(GET doctest_download_status 1 doctest_download_problem)
    string(REPLACE "\"" "" doctest_download_problem "${doctest_download_problem}")
    if(doctest_download_code EQUAL 0)
      file(SHA256 "${doctest_archive}" doctest_archive_actual_sha256)
      if(NOT doctest_archive_actual_sha256 STREQUAL doctest_archive_sha256)
        set(doctest_download_problem "the file's SHA-256 is ${doctest_archive_actual_sha256}, not the release's ${doctest_archive_sha256}")
        set(doctest_download_code 1)
      endif()
    endif()
    if(NOT doctest_download_code EQUAL 0)
      file(REMOVE "${doctest_archive}")
      message(FATAL_ERROR
        "The tests need doctest: it is not installed, and downloading it from ${WORKLOG_DOCTEST_URL} failed "
        "(${doctest_download_problem}). Any one of these gets it:\n"
        "  - install it: apt-get update && apt-get install doctest-dev (Debian/Ubuntu), or any doctest 2.4 "
        "install, which -Ddoctest_DIR=<folder with doctestConfig.cmake> points CMake to;\n"
        "  - fetch that file some other way and put it at ${doctest_archive}, or unpack it and configure with "
        "-DFETCHCONTENT_SOURCE_DIR_DOCTEST=<its folder>;\n"
        "  - or configure without the tests: -DWORKLOG_TESTS=OFF (the worklog preset does).\n"
        "A -D option goes to a configure command, e.g. cmake --preset default -Ddoctest_DIR=<folder>, then "
        "cmake --build build and ctest --test-dir build (cmake --workflow takes no -D).")
    endif()
  endif()
endif()

FetchContent_MakeAvailable(doctest)
if(doctest_FOUND)
  message(STATUS "doctest: installed, ${doctest_DIR}")
else()
  add_library(doctest::doctest INTERFACE IMPORTED)
  target_include_directories(doctest::doctest INTERFACE "${doctest_SOURCE_DIR}")
  message(STATUS "doctest: release ${doctest_release}, in ${doctest_SOURCE_DIR}")
endif()
