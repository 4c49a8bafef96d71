# add_worklog_step(): one step of the worklog, as the top CMakeLists.txt lists them (one line each).
# Included by common/CMakeLists.txt after the harness library it links against.

# Builds a target's CUDA code for sm_90a alone, whatever CMAKE_CUDA_ARCHITECTURES says.
function(worklog_build_for_sm90a target)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a>")
endfunction()

# For a test program that runs only host code yet includes Hopper kernels with a step's kernel.cu
# (its plans played on the CPU): their device code as sm_90a PTX alone. ptxas, most of the time such a
# file takes to compile, is left out; the step's own object compiles the same kernels to machine
# code (and reports their warnings). Should such a program ever launch a kernel, the driver would
# compile the PTX for the GPU.
function(worklog_build_host_only_sm90a target)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=compute_90a>")
endfunction()

# add_worklog_step(<directory> [HOPPER] [SM90_LIBRARY] [FALLBACK <earlier step>...] [EXTRA <name>...] [TOOL <name>...]):
# one step = its kernel (an object library, linked into both the step's executable and the GPU tests,
# which find it through the step registry) + the shared main(), which runs the registered step named
# like the executable.
# HOPPER: the kernel uses sm_90a-only instructions (wgmma, setmaxnreg), so it is built for sm_90a
# alone, on every machine, whatever CMAKE_CUDA_ARCHITECTURES says, and links the general kernel
# (common/general_gemm.hpp) for the shapes TMA cannot describe.
# SM90_LIBRARY: the step calls what the Hopper library compiles once (worklog_sm90: common/sm90/*.cu,
# such as the stream-K GEMM that takes the problems the step hands on); its headers need no link.
# FALLBACK: the earlier steps' kernels are linked in too, for the shapes this one hands to them
# (find_step() at run time).
# EXTRA: more programs that ship with the step, each built from <directory>/<name>.cu into the
# executable <directory>_<name> (a microbenchmark, say); they are not steps.
# TOOL: likewise, but linked with the step's kernel and its fallbacks, to drive the step's own
# launchers (15's calibration).
# The steps, in order, are collected in the global property WORKLOG_STEPS; every executable they
# ship (the steps and their EXTRA and TOOL programs) in WORKLOG_EXECUTABLES (cli.help runs each with --help).
function(add_worklog_step step)
  cmake_parse_arguments(PARSE_ARGV 1 arg "HOPPER;SM90_LIBRARY" "" "FALLBACK;EXTRA;TOOL")
  add_library(${step}_kernel OBJECT ${PROJECT_SOURCE_DIR}/${step}/kernel.cu)
  target_link_libraries(${step}_kernel PUBLIC worklog_harness)
  if(arg_SM90_LIBRARY)
    target_link_libraries(${step}_kernel PUBLIC worklog_sm90)  # what the library compiles once (common/sm90/)
  endif()
  if(arg_HOPPER)
    worklog_build_for_sm90a(${step}_kernel)
    target_link_libraries(${step}_kernel PUBLIC worklog_general)  # for the shapes TMA cannot describe
  endif()
  add_executable(${step} ${PROJECT_SOURCE_DIR}/common/step_main.cpp)
  target_link_libraries(${step} PRIVATE ${step}_kernel worklog_harness)
  target_compile_definitions(${step} PRIVATE WORKLOG_STEP_NAME="${step}")
  foreach(fallback IN LISTS arg_FALLBACK)
    target_link_libraries(${step} PRIVATE ${fallback}_kernel)
  endforeach()
  foreach(extra IN LISTS arg_EXTRA)
    add_executable(${step}_${extra} ${PROJECT_SOURCE_DIR}/${step}/${extra}.cu)
    target_link_libraries(${step}_${extra} PRIVATE worklog_harness)
    if(arg_HOPPER)
      worklog_build_for_sm90a(${step}_${extra})
    endif()
    set_property(GLOBAL APPEND PROPERTY WORKLOG_EXECUTABLES ${step}_${extra})
  endforeach()
  foreach(tool IN LISTS arg_TOOL)
    add_executable(${step}_${tool} ${PROJECT_SOURCE_DIR}/${step}/${tool}.cu)
    target_link_libraries(${step}_${tool} PRIVATE ${step}_kernel worklog_harness)
    foreach(fallback IN LISTS arg_FALLBACK)
      target_link_libraries(${step}_${tool} PRIVATE ${fallback}_kernel)
    endforeach()
    if(arg_HOPPER)
      worklog_build_for_sm90a(${step}_${tool})
    endif()
    set_property(GLOBAL APPEND PROPERTY WORKLOG_EXECUTABLES ${step}_${tool})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY WORKLOG_STEPS ${step})
  set_property(GLOBAL APPEND PROPERTY WORKLOG_EXECUTABLES ${step})
endfunction()
