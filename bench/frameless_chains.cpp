// A small transformer-shaped workload whose functions are built without frame pointers
// (-fomit-frame-pointer): matmul, softmax (expf), GELU through libm's tanhf (which calls
// expm1f: a chain of three frameless functions) and layer norm. Issue 21 compares the self and
// inclusive shares nnprof gives its functions with `perf record --call-graph dwarf`
// (docs/PERFORMANCE.md, "Issue 21: callers through frameless chains").
//
// usage: nnprof_frameless_chains [seconds of CPU time, default 3]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

constexpr int kTokens = 64, kWidth = 128, kHidden = 512;

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// out[t][j] = sum_k in[t][k] * w[k][j]
__attribute__((noinline)) void matmul(const float* in, const float* w, float* out, int rows, int inner, int cols) {
  for (int t = 0; t < rows; ++t) {
    float* o = out + static_cast<long>(t) * cols;
    for (int j = 0; j < cols; ++j) o[j] = 0.0f;
    for (int k = 0; k < inner; ++k) {
      const float a = in[static_cast<long>(t) * inner + k];
      const float* wr = w + static_cast<long>(k) * cols;
      for (int j = 0; j < cols; ++j) o[j] += a * wr[j];
    }
  }
}

__attribute__((noinline)) void softmax(float* x, int rows, int cols) {
  for (int t = 0; t < rows; ++t) {
    float* r = x + static_cast<long>(t) * cols;
    float m = r[0];
    for (int j = 1; j < cols; ++j) m = r[j] > m ? r[j] : m;
    float sum = 0.0f;
    for (int j = 0; j < cols; ++j) sum += (r[j] = std::exp(r[j] - m));
    for (int j = 0; j < cols; ++j) r[j] /= sum;
  }
}

// The tanh approximation, one libm tanhf call per element (tanhf calls expm1f).
__attribute__((noinline)) void gelu(float* x, int n) {
  constexpr float c = 0.7978845608f;
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
  }
}

__attribute__((noinline)) void layernorm(float* x, int rows, int cols) {
  for (int t = 0; t < rows; ++t) {
    float* r = x + static_cast<long>(t) * cols;
    float mean = 0.0f, var = 0.0f;
    for (int j = 0; j < cols; ++j) mean += r[j];
    mean /= static_cast<float>(cols);
    for (int j = 0; j < cols; ++j) var += (r[j] - mean) * (r[j] - mean);
    const float inv = 1.0f / std::sqrt(var / static_cast<float>(cols) + 1e-5f);
    for (int j = 0; j < cols; ++j) r[j] = (r[j] - mean) * inv;
  }
}

struct Weights {
  std::vector<float> attn, up, down;
};

// One block: attention scores and their softmax, the MLP with GELU, layer norm.
__attribute__((noinline)) float block(const Weights& w, std::vector<float>& x, std::vector<float>& scores,
                                      std::vector<float>& hidden) {
  matmul(x.data(), w.attn.data(), scores.data(), kTokens, kWidth, kTokens);
  softmax(scores.data(), kTokens, kTokens);
  matmul(x.data(), w.up.data(), hidden.data(), kTokens, kWidth, kHidden);
  gelu(hidden.data(), kTokens * kHidden);
  matmul(hidden.data(), w.down.data(), x.data(), kTokens, kHidden, kWidth);
  layernorm(x.data(), kTokens, kWidth);
  return x[0] + scores[0];
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  std::srand(7);
  auto random_vector = [](std::size_t n, float scale) {
    std::vector<float> v(n);
    for (float& f : v) f = scale * (static_cast<float>(std::rand()) / RAND_MAX - 0.5f);
    return v;
  };
  const Weights w{random_vector(kWidth * kTokens, 0.2f), random_vector(kWidth * kHidden, 0.2f),
                  random_vector(kHidden * kWidth, 0.1f)};
  std::vector<float> x = random_vector(kTokens * kWidth, 2.0f), scores(kTokens * kTokens), hidden(kTokens * kHidden);
  const double start = cpu_seconds();
  float checksum = 0.0f;
  long blocks = 0;
  while (cpu_seconds() - start < seconds) {
    checksum += block(w, x, scores, hidden);
    ++blocks;
  }
  std::printf("blocks %ld checksum %g\n", blocks, static_cast<double>(checksum));
  return 0;
}
