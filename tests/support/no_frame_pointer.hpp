// NNPROF_TEST_NO_FRAME_POINTER: builds one function without a frame pointer, for the tests of
// unwinding through frameless code. GCC can do that per function (the optimize attribute);
// clang cannot, so under clang (the sanitizer builds) such a function keeps its frame pointer and
// the test checks the plain case there, while the GCC release build checks the frameless one.
// (tests/frameless_chain.cpp, a whole file built with -fomit-frame-pointer, is frameless under both.)
#pragma once

#if defined(__clang__)
#define NNPROF_TEST_NO_FRAME_POINTER
#else
#define NNPROF_TEST_NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#endif
