// Demangled C++ names as a reader wants them in a sentence.
#pragma once

#include <string>
#include <string_view>

namespace nnprof::analysis {

/// `name` without its return type, parameter list, qualifiers and compiler suffixes, with
/// template arguments elided when the name would still be long:
///   "void ns::gemm<ns::Avx512, 1, 16>(int, float const*) [clone .constprop.0]" → "ns::gemm<ns::Avx512, 1, 16>"
/// A name it cannot parse (unbalanced brackets, an operator made of them) comes back whole;
/// C names and "[unknown]" are unchanged. Tables and JSON keep the full name.
std::string readable_function(std::string_view name);

}  // namespace nnprof::analysis
