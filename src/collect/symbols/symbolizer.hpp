// Function, file:line and module of code addresses in this process, through libdw.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nnprof::collect {

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

/// Symbolizes addresses of the current process. Construction reads /proc/self/maps (~0.3 ms);
/// each module's symbol table is loaded and sorted on its first lookup, its DWARF line
/// tables on the first lookup that reaches them (tens of ms for a large library); results
/// are cached per address. Modules loaded later are picked up on demand. Thread-safe (one
/// lock), never throws; not for use inside malloc hooks or signal handlers.
class Symbolizer {
 public:
  Symbolizer() noexcept;
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;

  /// False when libdw could not be set up (or after a move from it); every lookup then gives
  /// an empty Symbol.
  [[nodiscard]] bool ok() const noexcept;

  /// A return address (from capture_stack) is looked up at address - 1, so that function and
  /// line are those of the call instruction rather than of whatever follows it.
  Symbol resolve(std::uintptr_t address, bool return_address) noexcept;
  /// The same for many addresses, under one lock.
  std::vector<Symbol> resolve_all(std::span<const std::uintptr_t> addresses, bool return_addresses) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnprof::collect
