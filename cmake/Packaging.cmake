# Install tree: headers, libnnprof.so, libnnprof_memory.so (nnprof::memory), the nnprof CLI, a CMake package and a pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/nnprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(NNPROF_INSTALLED_LIBRARIES nnprof nnprof_memory)
if(NNPROF_TORCH_ENABLED)
  list(APPEND NNPROF_INSTALLED_LIBRARIES nnprof_torch)  # nnprof::torch, the PyTorch operator observer
endif()
install(TARGETS ${NNPROF_INSTALLED_LIBRARIES} EXPORT nnprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(NNPROF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nnprof)
install(EXPORT nnprofTargets NAMESPACE nnprof:: DESTINATION ${NNPROF_CMAKE_DIR})
configure_package_config_file(cmake/nnprofConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/nnprofConfig.cmake INSTALL_DESTINATION ${NNPROF_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/nnprofConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nnprofConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/nnprofConfigVersion.cmake
        DESTINATION ${NNPROF_CMAKE_DIR})

configure_file(cmake/nnprof.pc.in ${CMAKE_CURRENT_BINARY_DIR}/nnprof.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nnprof.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
