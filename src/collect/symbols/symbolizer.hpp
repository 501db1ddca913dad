// Function, file:line and module of code addresses in this process, through libdw.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "record/raw_symbols.hpp"

namespace nnprof::collect {

// The symbolizer's results are the snapshot's symbol type, so that the model reads them
// without including anything from this layer.
using detail::InlinedCall;
using detail::Symbol;

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
