# The NVIDIA GPU collector (issue 8, docs/GPU_DESIGN.md). Only CUDA *headers* are used at build
# time: CUPTI, the driver and NVML are dlopen'ed at run time, so libnnprof never has a NEEDED
# entry for them and one library runs on machines with and without a GPU.
set(NNPROF_CUDA AUTO CACHE STRING "NVIDIA GPU collector: AUTO (when the CUDA toolkit is found), ON, OFF")
set_property(CACHE NNPROF_CUDA PROPERTY STRINGS AUTO ON OFF)
set(NNPROF_CUDA_ENABLED OFF)
if(NOT NNPROF_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit 12 QUIET)
  if(CUDAToolkit_FOUND AND CUDAToolkit_CUPTI_INCLUDE_DIR AND EXISTS "${CUDAToolkit_CUPTI_INCLUDE_DIR}/cupti.h")
    set(NNPROF_CUDA_ENABLED ON)
    message(STATUS "nnprof: GPU collector on (CUDA ${CUDAToolkit_VERSION}, CUPTI headers in ${CUDAToolkit_CUPTI_INCLUDE_DIR})")
  elseif(NNPROF_CUDA STREQUAL "ON")
    message(FATAL_ERROR "NNPROF_CUDA=ON but no CUDA toolkit with CUPTI headers (cupti.h) was found: install the "
      "CUDA toolkit (with CUPTI) or set CUDAToolkit_ROOT, or configure with -DNNPROF_CUDA=OFF")
  else()
    message(STATUS "nnprof: GPU collector off (no CUDA toolkit with CUPTI headers found)")
  endif()
endif()

# Include directories for a source file or target that includes CUDA headers. -isystem keeps
# -Wpedantic quiet about them, and nothing CUDA lands in an exported link interface.
set(NNPROF_CUDA_INCLUDE_OPTIONS "")
if(NNPROF_CUDA_ENABLED)
  set(NNPROF_CUDA_INCLUDE_DIRS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_CUPTI_INCLUDE_DIR})
  list(REMOVE_DUPLICATES NNPROF_CUDA_INCLUDE_DIRS)
  foreach(dir IN LISTS NNPROF_CUDA_INCLUDE_DIRS)
    list(APPEND NNPROF_CUDA_INCLUDE_OPTIONS "-isystem" "${dir}")
  endforeach()
  # Where this toolkit keeps libcupti, tried after the loader's own search (cuda_loader.cpp).
  set(NNPROF_CUPTI_HINTS "${CUDAToolkit_LIBRARY_DIR}/libcupti.so")
  if(CUDAToolkit_LIBRARY_ROOT)
    string(APPEND NNPROF_CUPTI_HINTS ":${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64/libcupti.so")
  endif()
endif()
