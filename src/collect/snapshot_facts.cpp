#include "collect/snapshot_facts.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "collect/cpu/python_frames.hpp"
#include "collect/host_info.hpp"
#include "collect/symbols/symbolizer.hpp"

namespace nnprof::collect {

namespace {

void add_host(detail::RawSnapshot& raw) {
  detail::RawHost& host = raw.host;
  static_cast<detail::HostFacts&>(host) = read_host_info();

  // Only sampled threads that never recorded a scope need this: the session knows its own.
  std::unordered_set<std::int64_t> checked;
  for (const detail::RawThread& t : raw.threads) checked.insert(t.os_tid);
  host.exited_threads.clear();
  for (const detail::RawCpuSample& s : raw.cpu.samples) {
    if (!checked.insert(s.tid).second) continue;
    if (!std::filesystem::exists(fmt::format("/proc/self/task/{}", s.tid))) host.exited_threads.push_back(s.tid);
  }
  std::sort(host.exited_threads.begin(), host.exited_threads.end());
}

// The symbols of addresses resolved by earlier snapshots, and the libdw session that resolved
// them, kept while the process's executable file mappings stay as they were. A live view takes
// a snapshot every second, and resolving every address again through a fresh libdw session
// (which re-reads, and decompresses, the modules' symbol and line tables) cost 50-300 ms of CPU
// per snapshot in a sampled process; with the session kept, a new address costs a lookup.
struct SymbolCache {
  std::mutex mu;
  pid_t owner = getpid();  // a forked child does not use it: the lock may have been held at the fork
  std::uint64_t mappings_key = 0;
  std::optional<Symbolizer> symbolizer;
  std::unordered_map<std::uintptr_t, Symbol> at_return_address;
  std::unordered_map<std::uintptr_t, Symbol> at_code_address;
};

SymbolCache& symbol_cache() {
  static auto* cache = new SymbolCache;  // never destroyed: snapshots may run after main
  return *cache;
}

// A hash of the executable, file-backed lines of /proc/self/maps: it changes when a module is
// loaded, unloaded or moved, not when the heap or a thread stack is mapped.
std::uint64_t executable_mappings_key() {
  std::ifstream maps("/proc/self/maps");
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (std::string line; std::getline(maps, line);) {
    const std::size_t perms = line.find(' ');
    if (perms == std::string::npos || perms + 3 >= line.size() || line[perms + 3] != 'x') continue;
    if (line.find('/') == std::string::npos) continue;
    for (const char c : line) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return hash;
}

// Puts the symbols of `list` into `table`, resolving through `known` (the addresses resolved
// before; new ones are added) and `symbolizer` (made when an address is new).
void resolve(const std::vector<std::uintptr_t>& list, bool return_addresses,
             std::unordered_map<std::uintptr_t, Symbol>& known, std::optional<Symbolizer>& symbolizer,
             std::unordered_map<std::uintptr_t, Symbol>& table) {
  std::vector<std::uintptr_t> missing;
  for (const std::uintptr_t a : list)
    if (known.find(a) == known.end()) missing.push_back(a);
  if (!missing.empty()) {
    if (!symbolizer) symbolizer.emplace();
    std::vector<Symbol> symbols = symbolizer->resolve_all(missing, return_addresses);
    // Fewer symbols than addresses only when memory ran out: the model shows those unresolved.
    for (std::size_t i = 0; i < symbols.size() && i < missing.size(); ++i) known.emplace(missing[i], std::move(symbols[i]));
  }
  table.reserve(list.size());
  for (const std::uintptr_t a : list)
    if (const auto it = known.find(a); it != known.end()) table.emplace(a, it->second);
}

void add_symbols(detail::RawSnapshot& raw) {
  const detail::StackAddresses addresses = detail::stack_addresses(raw);
  raw.symbols = {};
  if (addresses.returns.empty() && addresses.code.empty()) return;  // no /proc/self/maps to read
  std::vector<std::uintptr_t> code = addresses.code;
  // Python frames carry their own symbols, copied by the sampler while the code was alive.
  std::erase_if(code, [&](std::uintptr_t a) {
    if (!is_python_frame_address(a)) return false;
    const std::uintptr_t index = a & ~kPythonFrameTag;
    if (index < raw.cpu.python_frames.size()) raw.symbols.at_code_address.emplace(a, raw.cpu.python_frames[index]);
    return true;
  });
  SymbolCache& cache = symbol_cache();
  if (getpid() != cache.owner) {
    std::unordered_map<std::uintptr_t, Symbol> returns, codes;
    std::optional<Symbolizer> symbolizer;
    resolve(addresses.returns, true, returns, symbolizer, raw.symbols.at_return_address);
    resolve(code, false, codes, symbolizer, raw.symbols.at_code_address);
    return;
  }
  std::lock_guard lock(cache.mu);
  if (const std::uint64_t key = executable_mappings_key(); key != cache.mappings_key) {
    cache.mappings_key = key;
    cache.at_return_address.clear();
    cache.at_code_address.clear();
    cache.symbolizer.reset();
  }
  resolve(addresses.returns, true, cache.at_return_address, cache.symbolizer, raw.symbols.at_return_address);
  resolve(code, false, cache.at_code_address, cache.symbolizer, raw.symbols.at_code_address);
}

}  // namespace

void add_process_facts(detail::RawSnapshot& raw) {
  add_host(raw);
  add_symbols(raw);
}

}  // namespace nnprof::collect
