// Writes a profile with every GPU table filled (tests/gpu_profile_fixture.hpp) to argv[1]: a
// seed for fuzz_load_profile, so the fuzzer starts from valid gpu_* rows (no GPU on CI).
#include <cstdio>
#include <exception>

#include "gpu_profile_fixture.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_gpu_seed OUT.nnprof\n");
    return 2;
  }
  try {
    nnprof::testing::gpu_profile().save(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_gpu_seed: %s\n", e.what());
    return 1;
  }
  return 0;
}
