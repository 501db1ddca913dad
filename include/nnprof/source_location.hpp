// A call site of an instrumented scope: compile-time constant, referenced by pointer.
#pragma once

#include <cstdint>

namespace nnprof {

/// Where a scope was declared. Macros create one `static constexpr` instance per call site,
/// so the hot path passes only its address; names given at run time are interned into
/// instances owned by the profiler.
struct SourceLocation {
  const char* name;      ///< scope name shown in reports
  const char* function;  ///< enclosing function (may be empty for names given at run time)
  const char* file;      ///< source file (may be empty)
  std::uint32_t line;    ///< source line (0 when unknown)
};

}  // namespace nnprof
