# Installs the build tree into a scratch prefix, then builds and runs the consumer project
# against it twice: with find_package(nnprof) and with pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${NNPROF_BINARY_DIR} --prefix ${prefix})
foreach(f include/nnprof/nnprof.hpp bin/nnprof lib/cmake/nnprof/nnprofConfig.cmake
          lib/cmake/nnprof/nnprofConfigVersion.cmake lib/pkgconfig/nnprof.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "missing from the install tree: ${f}")
  endif()
endforeach()
file(GLOB so ${prefix}/lib/libnnprof.so*)
if(NOT so)
  message(FATAL_ERROR "missing from the install tree: lib/libnnprof.so")
endif()

# 1. CMake package.
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${CMAKE_GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
if(NOT last_output MATCHES "consumer_scope calls=3 memory=4096")
  message(FATAL_ERROR "unexpected consumer output: ${last_output}")
endif()

# 2. pkg-config.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  run(${PKG_CONFIG} --cflags --libs nnprof)
  string(STRIP "${last_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(c++ ${CONSUMER_SOURCE_DIR}/main.cpp -o ${WORK_DIR}/consumer_pc ${flags} -Wl,-rpath,${prefix}/lib)
  run(${WORK_DIR}/consumer_pc)
  if(NOT last_output MATCHES "consumer_scope calls=3 memory=4096")
    message(FATAL_ERROR "unexpected pkg-config consumer output: ${last_output}")
  endif()
else()
  message(WARNING "pkg-config not found: the nnprof.pc check was skipped")
endif()
message(STATUS "installed package works with find_package and pkg-config")
