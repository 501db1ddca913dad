#include "collect/snapshot_facts.hpp"

#include <algorithm>
#include <filesystem>
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

void add_symbols(detail::RawSnapshot& raw) {
  const detail::StackAddresses addresses = detail::stack_addresses(raw);
  raw.symbols = {};
  if (addresses.returns.empty() && addresses.code.empty()) return;  // no /proc/self/maps to read
  Symbolizer symbolizer;
  for (const bool return_addresses : {true, false}) {
    std::vector<std::uintptr_t> list = return_addresses ? addresses.returns : addresses.code;
    auto& table = return_addresses ? raw.symbols.at_return_address : raw.symbols.at_code_address;
    // Python frames carry their own symbols, copied by the sampler while the code was alive.
    if (!return_addresses) {
      std::erase_if(list, [&](std::uintptr_t a) {
        if (!is_python_frame_address(a)) return false;
        const std::uintptr_t index = a & ~kPythonFrameTag;
        if (index < raw.cpu.python_frames.size()) table.emplace(a, raw.cpu.python_frames[index]);
        return true;
      });
    }
    std::vector<Symbol> symbols = symbolizer.resolve_all(list, return_addresses);
    // Fewer symbols than addresses only when memory ran out: the model shows those unresolved.
    table.reserve(symbols.size());
    for (std::size_t i = 0; i < symbols.size() && i < list.size(); ++i) table.emplace(list[i], std::move(symbols[i]));
  }
}

}  // namespace

void add_process_facts(detail::RawSnapshot& raw) {
  add_host(raw);
  add_symbols(raw);
}

}  // namespace nnprof::collect
