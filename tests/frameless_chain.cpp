// A chain of functions without frame pointers for the CPU sampler's tests (issue 21): this file
// is built with -fomit-frame-pointer (tests/CMakeLists.txt), so frameless_outer and
// frameless_middle set up no frame record, and frameless_middle spends its time in libm's
// tanhf, which has none either and calls expm1f. A frame-pointer walk from inside libm goes
// straight to frameless_outer's caller; only the unwind rules of every frame keep them all.
#include <cmath>

namespace nnprof_test {

// Not inlined, and not a tail call (the sum goes on after each call), so every frame stays on
// the stack while libm runs.
__attribute__((noinline)) float frameless_middle(float x, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += std::tanh(x + 1e-4f * static_cast<float>(i));  // tanhf: 0.1 to 2
  return sum;
}

__attribute__((noinline)) float frameless_outer(float x, int rounds, int n) {
  float sum = 0.0f;
  for (int r = 0; r < rounds; ++r) sum += frameless_middle(x + 1e-3f * static_cast<float>(r & 7), n);
  return sum;
}

}  // namespace nnprof_test
