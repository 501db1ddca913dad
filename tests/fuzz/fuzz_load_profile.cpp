// libFuzzer target: any bytes given to Profile::load either load as a valid profile (which
// every exporter can then render) or raise nnprof::Error; nothing may crash or hang.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

#include "io/exporter_registry.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/nnprof_fuzz_" + std::to_string(getpid()) + ".nnprof";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    const nnprof::Profile p = nnprof::Profile::load(path);
    for (const nnprof::io::Exporter* e : nnprof::io::all_exporters()) {
      std::ostringstream out;
      e->write(p, out);
    }
  } catch (const nnprof::Error&) {
    // The expected outcome for damaged input.
  }
  return 0;
}
