// Seed 000 (axonml-profile), Bottleneck Types "MemoryHotspot" (>30% of peak memory) and
// "MemoryLeak" (>5% of allocations not freed) from heap tracking (nnprof::MemoryTracking, the
// nnprof::memory library), which sees every allocation of the process and attributes it to the
// scope open at the time (000_bottleneck_memory_hotspot/_leak find them from record_alloc). `hotspot` or `leak` on the command line.
#include <nnprof/memory.hpp>
#include <nnprof/nnprof.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace {
// Allocates 1 MiB, uses it and drops the only pointer to it. noinline, so that no live frame
// of the caller keeps a copy of the pointer.
[[gnu::noinline]] long fill_cache_and_forget() {
  auto* block = static_cast<unsigned char*>(std::malloc(1 << 20));
  if (block == nullptr) return 0;
  std::memset(block, 7, 1 << 20);
  return block[12345];
}
}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc == 2 ? argv[1] : "";
  if (mode != "hotspot" && mode != "leak") {
    std::cerr << "usage: " << argv[0] << " hotspot|leak\n";
    return 2;
  }
  std::string why;
  if (!nnprof::heap_hooks_available(&why)) {
    std::cout << "heap tracking unavailable: " << why << "\n";
    return 0;
  }

  nnprof::Profiler profiler;
  double sink = 0.0;
  {
    nnprof::MemoryTracking tracking(profiler);
    if (mode == "hotspot") {
      {
        NNPROF_SCOPE_IN(profiler, "attention_scores");
        std::vector<float> scores(768 * 1024, 1.0f);  // 3 MiB
        sink += std::accumulate(scores.begin(), scores.end(), 0.0);
      }
      {
        NNPROF_SCOPE_IN(profiler, "bias");
        std::vector<float> bias(64 * 1024, 1.0f);  // 256 KiB
        sink += std::accumulate(bias.begin(), bias.end(), 0.0);
      }
    } else {
      NNPROF_SCOPE_IN(profiler, "cache_fill");
      sink += static_cast<double>(fill_cache_and_forget());
    }
  }

  for (const nnprof::Bottleneck& b : profiler.analyze_bottlenecks())
    std::cout << "[" << nnprof::to_string(b.severity) << "] " << nnprof::to_string(b.type) << " " << b.name << ": "
              << b.description << "\n";
  std::cout << "checksum: " << sink << "\n";
}
