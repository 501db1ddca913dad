// Uses the global profiler after main returns, as programs and the preload agent do: scopes
// from a static destructor, a snapshot taken there, and the profile saved by an atexit handler
// registered before everything else (the agent's handler runs last in the same way).
//
// Usage: profiler_after_main OUT.nnprof [ARGS...]; exits 0 when every step succeeded.
// Built with AddressSanitizer, a read of anything destroyed before the handler runs (the
// cached host facts used to be) fails the run.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "nnprof/nnprof.hpp"

namespace {

const char* g_out = nullptr;

void save_at_exit() {
  try {
    nnprof::global_profiler().save(g_out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "save at exit failed: %s\n", e.what());
    _exit(3);
  }
}

struct RecordsWhenDestroyed {
  ~RecordsWhenDestroyed() {
    {
      NNPROF_SCOPE("static destructor");
      nnprof::start("static destructor by name");
      nnprof::stop("static destructor by name");
    }
    // A snapshot here reads the host facts and the thread's state after their destructors
    // would have run; the test reads the profile saved at exit.
    const nnprof::Profile p = nnprof::global_profiler().snapshot();
    if (p.meta.os.empty()) std::fprintf(stderr, "the static destructor's snapshot has no OS\n");
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  g_out = argv[1];
  std::atexit(save_at_exit);  // registered first: runs after every static destructor below
  static RecordsWhenDestroyed recorder;
  { NNPROF_SCOPE("main"); }
  // Reads the host facts now, after the handler was registered: a cached copy destroyed at exit
  // would be gone before save_at_exit reads it.
  const nnprof::Profile p = nnprof::global_profiler().snapshot();
  return p.find_scope("main") != nullptr ? 0 : 5;
}
