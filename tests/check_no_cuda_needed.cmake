# ctest libnnprof_needs_no_cuda: fails when the dynamic section of LIBRARY (libnnprof.so) has a
# NEEDED entry for the CUDA driver or runtime, CUPTI, NVML or NVTX. nnprof dlopens those at run
# time (docs/GPU_DESIGN.md), so that one libnnprof loads on machines without a GPU.
#   cmake -DLIBRARY=build/lib/libnnprof.so -P tests/check_no_cuda_needed.cmake
if(NOT LIBRARY OR NOT EXISTS "${LIBRARY}")
  message(FATAL_ERROR "check_no_cuda_needed: LIBRARY='${LIBRARY}' does not exist; pass -DLIBRARY=<path to libnnprof.so>")
endif()
find_program(READELF NAMES readelf)
if(NOT READELF)
  message(FATAL_ERROR "check_no_cuda_needed: readelf not found (binutils)")
endif()
execute_process(COMMAND ${READELF} -d "${LIBRARY}" OUTPUT_VARIABLE dynamic ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_cuda_needed: readelf -d ${LIBRARY} failed (${rc}): ${err}")
endif()

# Lines like " 0x0000000000000001 (NEEDED)  Shared library: [libfmt.so.9]".
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]*\\]" needed_lines "${dynamic}")
if(NOT needed_lines)
  # A shared library needs at least libc: no match means the output was not parsed.
  message(FATAL_ERROR "check_no_cuda_needed: no NEEDED entry parsed from readelf -d ${LIBRARY}:\n${dynamic}")
endif()
set(needed "")
set(forbidden "")
foreach(line IN LISTS needed_lines)
  string(REGEX REPLACE ".*\\[([^]]*)\\].*" "\\1" name "${line}")
  list(APPEND needed "${name}")
  if(name MATCHES "^lib(cuda|cudart|cupti|nvidia-ml|nvToolsExt)([-._0-9]|$)")
    list(APPEND forbidden "${name}")
  endif()
endforeach()
list(JOIN needed ", " needed_text)
if(forbidden)
  list(JOIN forbidden ", " forbidden_text)
  message(FATAL_ERROR "${LIBRARY} needs ${forbidden_text} at load time; nnprof must dlopen CUDA, CUPTI, NVML and "
    "NVTX (src/collect/gpu/cuda_loader.cpp) so that it loads without a GPU. All NEEDED: ${needed_text}")
endif()
message(STATUS "${LIBRARY} needs no CUDA library (NEEDED: ${needed_text})")
