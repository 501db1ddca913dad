// Uses only the installed headers and library; prints one line the test checks.
#include <nnprof/nnprof.hpp>

#include <iostream>

int main() {
  nnprof::Profiler profiler;
  for (int i = 0; i < 3; ++i) {
    NNPROF_SCOPE_IN(profiler, "consumer_scope");
  }
  profiler.record_alloc("buffer", 4096);
  std::cout << "consumer_scope calls=" << profiler.call_count("consumer_scope")
            << " memory=" << profiler.current_memory() << "\n";
  return profiler.call_count("consumer_scope") == 3 && profiler.current_memory() == 4096 ? 0 : 1;
}
