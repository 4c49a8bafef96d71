# The route report (tools/route_shapes.txt, tools/route_report.json): lab_routes run on every shape
# of the list must print, byte for byte, the committed report: the route, the LAB regions that run,
# the plan's facts (tiles, parts, the menu's prices and picks) of every Hopper step on each shape. A
# change of a step's routing shows in review as a change of the report; when it is meant, rewrite it:
#     build/common/tests/lab_routes $(grep -v '^#' tools/route_shapes.txt) > tools/route_report.json
# Arguments: -DLAB_ROUTES=<lab_routes> -DSHAPES=<route_shapes.txt> -DEXPECTED=<route_report.json> -DOUT=<file>
file(STRINGS "${SHAPES}" lines)
set(shapes "")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^#" AND NOT line STREQUAL "")
    list(APPEND shapes "${line}")
  endif()
endforeach()
list(LENGTH shapes count)
execute_process(COMMAND "${LAB_ROUTES}" ${shapes} OUTPUT_FILE "${OUT}" RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "FAIL: lab_routes exited ${status}: ${errors}")
endif()
file(SHA256 "${OUT}" got)
file(SHA256 "${EXPECTED}" want)
if(NOT got STREQUAL want)
  message(FATAL_ERROR "FAIL: the route report of ${count} shapes (${OUT}) differs from ${EXPECTED}: "
                      "diff the two; if the change is meant, copy the new report over the committed one")
endif()
message(STATUS "the route report of ${count} shapes is byte for byte the committed one")
