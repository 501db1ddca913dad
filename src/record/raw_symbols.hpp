// Function, file:line and module of code addresses: what src/collect's symbolizer finds in this
// process, and what the model turns into stack frames without looking at the process itself.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace nnprof::detail {

/// A function the compiler inlined at an address, with the source line reached in it.
struct InlinedCall {
  std::string function;  ///< demangled
  std::string file;
  std::uint32_t line = 0;

  bool operator==(const InlinedCall&) const = default;
};

struct Symbol {
  std::string function;  ///< demangled; empty when no symbol covers the address
  std::string file;      ///< source file from DWARF line tables; empty without debug info
  std::uint32_t line = 0;  ///< in `function`: where it called the outermost inlined function, if any
  std::string module;  ///< path of the executable or shared object; empty when unmapped
  std::uint64_t module_offset = 0;  ///< the address in the module's own ELF address space (what addr2line takes)
  /// Functions inlined at this address, innermost first (the line executing is inlined[0]'s);
  /// each was inlined into the next, the last into `function`. Empty without DWARF.
  std::vector<InlinedCall> inlined;
};

/// The symbols of a snapshot's code addresses (stack_addresses in raw_snapshot.hpp). A return
/// address is looked up in its call instruction, so the same number can name two places.
struct RawSymbols {
  std::unordered_map<std::uintptr_t, Symbol> at_return_address;
  std::unordered_map<std::uintptr_t, Symbol> at_code_address;
};

}  // namespace nnprof::detail
