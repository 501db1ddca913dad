// Facts about the machine and process, read once per profile.
#pragma once

#include <cstdint>
#include <string>

#include "record/raw_snapshot.hpp"

namespace nnprof::collect {

/// The host facts, defined with the raw snapshot that carries them.
using HostInfo = detail::HostFacts;

/// Reads uname, /proc/cpuinfo and /proc/self/cmdline once; fields it cannot read stay empty.
/// Valid until the process ends, static destructors and atexit handlers included.
const HostInfo& read_host_info();

/// Logical CPUs this process may run on (its affinity mask), at least 1.
std::uint32_t usable_cpus();

/// The process's resident set size and its high-water mark, in bytes.
struct ProcessMemory {
  std::uint64_t rss = 0;  ///< VmRSS
  std::uint64_t hwm = 0;  ///< VmHWM: the highest RSS of the process's life
};

/// Reads /proc/self/status; zeros when it cannot. Allocates nothing: the heap hooks call it.
ProcessMemory read_process_memory() noexcept;

}  // namespace nnprof::collect
