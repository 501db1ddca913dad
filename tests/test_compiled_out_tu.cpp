// Built with NNPROF_ENABLED=0: every macro here must vanish.
#define NNPROF_ENABLED 0
#include "nnprof/nnprof.hpp"

int compiled_out_work([[maybe_unused]] nnprof::Profiler& profiler, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    NNPROF_SCOPE_IN(profiler, "compiled_out_scope");
    NNPROF_SCOPE("compiled_out_global");
    NNPROF_FUNCTION();
    sum += i;
  }
  return sum;
}
