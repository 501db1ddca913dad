# Warnings and sanitizers for every nnprof target, through one interface target.
add_library(nnprof_build_options INTERFACE)
target_compile_options(nnprof_build_options INTERFACE -Wall -Wextra -Wpedantic
  $<$<BOOL:${NNPROF_WERROR}>:-Werror>)

# Frame pointers everywhere: the sampling profiler walks them, and they cost ~1% here.
target_compile_options(nnprof_build_options INTERFACE -fno-omit-frame-pointer)

if(NNPROF_SANITIZE)
  target_compile_options(nnprof_build_options INTERFACE -fsanitize=${NNPROF_SANITIZE} -fno-sanitize-recover=all)
  target_link_options(nnprof_build_options INTERFACE -fsanitize=${NNPROF_SANITIZE})
endif()
# Which sanitizer the code is built with, for the few places that must know, under GCC and
# clang alike (clang 14 defines neither of GCC's __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__).
if(NNPROF_SANITIZE MATCHES "address")
  target_compile_definitions(nnprof_build_options INTERFACE NNPROF_SANITIZE_ADDRESS=1)
endif()
if(NNPROF_SANITIZE MATCHES "thread")
  target_compile_definitions(nnprof_build_options INTERFACE NNPROF_SANITIZE_THREAD=1)
endif()
