// The transformer's numeric kernels: every SIMD version this CPU runs against the scalar
// reference on many shapes (odd sizes, padded leading dimensions, accumulate, the m = 1 GEMV
// of decoding), plus properties that hold whatever the version (softmax sums to 1, known GELU
// values, layer norm gives mean 0 and variance 1) and the choice of instruction set.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels.hpp"

namespace {

namespace k = nnprof::transformer::kernels;
using k::Isa;

bool cpu_runs(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(k::best_isa()); }

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Restores the active instruction set after a test that changes it.
class ActiveIsaGuard {
 public:
  ActiveIsaGuard() : saved_(k::active_isa()) {}
  ~ActiveIsaGuard() { k::set_active_isa(saved_); }
  ActiveIsaGuard(const ActiveIsaGuard&) = delete;
  ActiveIsaGuard& operator=(const ActiveIsaGuard&) = delete;

 private:
  Isa saved_;
};

TEST(KernelIsa, Names) {
  EXPECT_STREQ(k::to_string(Isa::Scalar), "scalar");
  EXPECT_STREQ(k::to_string(Isa::Avx2), "avx2+fma");
  EXPECT_STREQ(k::to_string(Isa::Avx512), "avx512f");
}

TEST(KernelIsa, ActiveDefaultsToBestAndRoundTrips) {
  ActiveIsaGuard guard;
  EXPECT_EQ(k::active_isa(), k::best_isa());
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (!cpu_runs(isa)) continue;
    k::set_active_isa(isa);
    EXPECT_EQ(k::active_isa(), isa) << k::to_string(isa);
  }
  k::set_active_isa(k::best_isa());
  EXPECT_EQ(k::active_isa(), k::best_isa());
}

TEST(KernelIsa, UnsupportedIsaThrows) {
  ActiveIsaGuard guard;
  if (k::best_isa() == Isa::Avx512) GTEST_SKIP() << "this CPU runs every instruction set the kernels have";
  const Isa missing = k::best_isa() == Isa::Avx2 ? Isa::Avx512 : Isa::Avx2;
  const Isa before = k::active_isa();
  try {
    k::set_active_isa(missing);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(k::to_string(missing)), std::string::npos) << e.what();
  }
  EXPECT_EQ(k::active_isa(), before);
  float x = 1.0f;
  EXPECT_THROW(k::softmax(missing, &x, 1), std::invalid_argument);
}

class Kernels : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!cpu_runs(GetParam())) GTEST_SKIP() << "this CPU cannot run " << k::to_string(GetParam());
  }
  Isa isa() const { return GetParam(); }
};

// Float sums of k products in another order: the error grows with √k (random signs).
::testing::AssertionResult close_sum(float got, float want, int kk) {
  const double tol = 1e-4 * (1.0 + std::fabs(want)) * std::sqrt(static_cast<double>(kk > 0 ? kk : 1));
  if (std::fabs(static_cast<double>(got) - want) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << " vs " << want << " (tolerance " << tol << ")";
}

constexpr float kSentinel = 12345.0f;

// C (m×n, leading dimension ldc) from `isa` against the scalar reference, including that the
// padding between n and ldc is untouched.
void check_matmul(Isa isa, int m, int n, int kk, int pad_a, int pad_b, int pad_c, bool accumulate, unsigned seed) {
  const int lda = kk + pad_a, ldb = n + pad_b, ldc = n + pad_c;
  const auto a = random_floats(static_cast<std::size_t>(m) * lda + 1, seed);
  const auto b = random_floats(static_cast<std::size_t>(kk) * ldb + 1, seed + 1);
  std::vector<float> c0 = random_floats(static_cast<std::size_t>(m) * ldc, seed + 2);
  for (int i = 0; i < m; ++i)
    for (int j = n; j < ldc; ++j) c0[static_cast<std::size_t>(i) * ldc + j] = kSentinel;
  std::vector<float> want = c0, got = c0;
  k::matmul(Isa::Scalar, m, n, kk, a.data(), lda, b.data(), ldb, want.data(), ldc, accumulate);
  k::matmul(isa, m, n, kk, a.data(), lda, b.data(), ldb, got.data(), ldc, accumulate);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < ldc; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * ldc + j;
      if (j >= n) {
        ASSERT_EQ(got[at], kSentinel) << "wrote past n at (" << i << "," << j << ") m=" << m << " n=" << n << " k=" << kk;
        continue;
      }
      ASSERT_TRUE(close_sum(got[at], want[at], kk))
          << "at (" << i << "," << j << ") m=" << m << " n=" << n << " k=" << kk << " lda=" << lda << " ldb=" << ldb
          << " ldc=" << ldc << " accumulate=" << accumulate;
    }
}

TEST_P(Kernels, MatmulMatchesScalarOnOddShapes) {
  const int sizes[] = {1, 2, 3, 7, 16, 17, 31, 64, 65, 128, 129};
  unsigned seed = 1;
  for (int m : sizes)
    for (int n : sizes)
      for (int kk : sizes) {
        const bool accumulate = (seed % 2) == 0;
        check_matmul(isa(), m, n, kk, 0, 0, 0, accumulate, seed++);
        if (HasFatalFailure()) return;
      }
}

TEST_P(Kernels, MatmulWithPaddedLeadingDimensionsAndAccumulate) {
  const int sizes[] = {1, 3, 8, 15, 33, 70};
  unsigned seed = 100;
  for (int m : sizes)
    for (int n : sizes)
      for (int kk : sizes)
        for (bool accumulate : {false, true}) {
          check_matmul(isa(), m, n, kk, 5, 3, 9, accumulate, seed++);
          if (HasFatalFailure()) return;
        }
}

TEST_P(Kernels, MatmulAcrossCacheBlocks) {
  // Shapes that cross the k-block (256), the m-block, and the n-block (4096) of the blocked
  // kernel, the small-m path for every row count, and the decoding shapes of the model.
  struct Shape {
    int m, n, kk;
  };
  const Shape shapes[] = {{200, 300, 600}, {512, 64, 33},  {9, 4200, 20},  {13, 97, 513}, {1, 2048, 512},
                          {1, 768, 256},   {1, 3072, 768}, {4, 1000, 300}, {5, 100, 1000}, {6, 33, 77},
                          {7, 129, 260},   {8, 50, 50},    {30, 30, 257},  {2, 4099, 3}};
  unsigned seed = 1000;
  for (const Shape& s : shapes)
    for (bool accumulate : {false, true}) {
      check_matmul(isa(), s.m, s.n, s.kk, 1, 7, 2, accumulate, seed++);
      if (HasFatalFailure()) return;
    }
}

TEST_P(Kernels, MatmulOnEitherSideOfTheDirectOrPackedChoice) {
  // Up to 64 rows, a B over 1 MiB is streamed unpacked unless its rows lie a multiple of
  // 4 KiB apart (ldb = 1024): both sides, and the row counts around the limit.
  unsigned seed = 3000;
  for (int m : {8, 64, 65})
    for (int n : {1000, 1024}) {
      check_matmul(isa(), m, n, 270, 0, 0, 0, /*accumulate=*/m == 64, seed++);
      if (HasFatalFailure()) return;
    }
}

TEST_P(Kernels, GemvMatchesScalar) {
  // m = 1: the hot case of token-by-token decoding.
  unsigned seed = 5000;
  for (int n : {1, 5, 16, 17, 100, 255, 256, 257, 768, 1000, 2048, 2049})
    for (int kk : {1, 2, 31, 256, 768})
      for (bool accumulate : {false, true}) {
        check_matmul(isa(), 1, n, kk, 0, 13, 0, accumulate, seed++);
        if (HasFatalFailure()) return;
      }
}

TEST_P(Kernels, MatmulOfEmptyInnerDimensionIsZero) {
  std::vector<float> c(6, 7.0f);
  const float dummy = 1.0f;
  k::matmul(isa(), 2, 3, 0, &dummy, 1, &dummy, 3, c.data(), 3, true);
  for (float v : c) EXPECT_EQ(v, 7.0f);
  k::matmul(isa(), 2, 3, 0, &dummy, 1, &dummy, 3, c.data(), 3, false);
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST_P(Kernels, MatmulBtMatchesScalar) {
  unsigned seed = 7000;
  for (int m : {1, 2, 3, 4, 5, 8, 17})
    for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 33, 129})
      for (int kk : {1, 3, 16, 32, 33, 64, 100}) {
        // B is a head's slice of a wider KV cache: its leading dimension is several heads wide.
        const int lda = kk + 2, ldb = 4 * kk + 1, ldc = n + 3;
        const auto a = random_floats(static_cast<std::size_t>(m) * lda, seed++);
        const auto b = random_floats(static_cast<std::size_t>(n) * ldb, seed++);
        std::vector<float> want(static_cast<std::size_t>(m) * ldc, kSentinel), got = want;
        k::matmul_bt(Isa::Scalar, m, n, kk, a.data(), lda, b.data(), ldb, want.data(), ldc);
        k::matmul_bt(isa(), m, n, kk, a.data(), lda, b.data(), ldb, got.data(), ldc);
        for (std::size_t i = 0; i < got.size(); ++i) {
          if (want[i] == kSentinel) {
            ASSERT_EQ(got[i], kSentinel) << "m=" << m << " n=" << n << " k=" << kk;
            continue;
          }
          ASSERT_TRUE(close_sum(got[i], want[i], kk)) << "at " << i << " m=" << m << " n=" << n << " k=" << kk;
        }
      }
}

TEST_P(Kernels, AddBiasAndAddInplaceAreExact) {
  for (int n : {0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 100}) {
    const auto x = random_floats(static_cast<std::size_t>(n) + 1, 11u + static_cast<unsigned>(n));
    auto y0 = random_floats(static_cast<std::size_t>(n) + 1, 99u + static_cast<unsigned>(n));
    y0[static_cast<std::size_t>(n)] = kSentinel;
    auto want = y0, got = y0, got_bias = y0;
    k::add_inplace(Isa::Scalar, want.data(), x.data(), n);
    k::add_inplace(isa(), got.data(), x.data(), n);
    k::add_bias(isa(), got_bias.data(), x.data(), n);
    EXPECT_EQ(got, want) << "n=" << n;
    EXPECT_EQ(got_bias, want) << "n=" << n;
  }
}

TEST_P(Kernels, SoftmaxMatchesScalarAndSumsToOne) {
  for (int n : {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 64, 100, 1000, 4097}) {
    const auto x = random_floats(static_cast<std::size_t>(n) + 1, 300u + static_cast<unsigned>(n), -20.0f, 20.0f);
    auto want = x, got = x;
    got[static_cast<std::size_t>(n)] = kSentinel;
    k::softmax(Isa::Scalar, want.data(), n);
    k::softmax(isa(), got.data(), n);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      sum += got[static_cast<std::size_t>(i)];
      ASSERT_NEAR(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)],
                  1e-6 + 1e-5 * want[static_cast<std::size_t>(i)])
          << "n=" << n << " i=" << i;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "n=" << n;
    EXPECT_EQ(got[static_cast<std::size_t>(n)], kSentinel) << "n=" << n;
  }
}

TEST_P(Kernels, SoftmaxIsStableForLargeInputs) {
  std::vector<float> x(37, 1000.0f);
  k::softmax(isa(), x.data(), 37);
  for (float v : x) EXPECT_NEAR(v, 1.0f / 37, 1e-7);

  // Logits far apart: the largest dominates, nothing overflows, masked (−inf) entries are 0.
  std::vector<float> y = {1000.0f, 999.0f, -1000.0f, 0.0f, -std::numeric_limits<float>::infinity()};
  k::softmax(isa(), y.data(), 5);
  const double e1 = std::exp(-1.0);
  EXPECT_NEAR(y[0], 1.0 / (1.0 + e1), 1e-6);
  EXPECT_NEAR(y[1], e1 / (1.0 + e1), 1e-6);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 0.0f);

  float one = -3.5f;
  k::softmax(isa(), &one, 1);
  EXPECT_EQ(one, 1.0f);
}

TEST_P(Kernels, GeluKnownValues) {
  // Tanh approximation: gelu(1) = 0.5·(1 + tanh(√(2/π)·1.044715)).
  std::vector<float> x = {0.0f, 1.0f, -1.0f, 3.0f, -3.0f, 10.0f, -10.0f};
  k::gelu(isa(), x.data(), static_cast<int>(x.size()));
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_NEAR(x[1], 0.841192f, 1e-6);
  EXPECT_NEAR(x[2], -0.158808f, 1e-6);
  EXPECT_NEAR(x[3], 2.996363f, 1e-5);
  EXPECT_NEAR(x[4], -0.003637f, 1e-6);
  EXPECT_NEAR(x[5], 10.0f, 1e-5);
  EXPECT_NEAR(x[6], 0.0f, 1e-6);
}

TEST_P(Kernels, GeluMatchesScalar) {
  for (int n : {1, 7, 16, 17, 33, 1000}) {
    const auto x = random_floats(static_cast<std::size_t>(n) + 1, 500u + static_cast<unsigned>(n), -10.0f, 10.0f);
    auto want = x, got = x;
    got[static_cast<std::size_t>(n)] = kSentinel;
    k::gelu(Isa::Scalar, want.data(), n);
    k::gelu(isa(), got.data(), n);
    for (int i = 0; i < n; ++i) {
      const float w = want[static_cast<std::size_t>(i)];
      // The reference's 1 + tanh(u) cancels for negative x: an absolute term covers its error.
      ASSERT_NEAR(got[static_cast<std::size_t>(i)], w, 1e-6 + 1e-5 * std::fabs(w))
          << "x=" << x[static_cast<std::size_t>(i)];
    }
    EXPECT_EQ(got[static_cast<std::size_t>(n)], kSentinel);
  }
}

TEST_P(Kernels, LayernormGivesMeanZeroVarianceOne) {
  for (int n : {2, 7, 16, 17, 33, 256, 768, 1001}) {
    const auto x = random_floats(static_cast<std::size_t>(n), 700u + static_cast<unsigned>(n), -5.0f, 15.0f);
    const std::vector<float> gamma(static_cast<std::size_t>(n), 1.0f), beta(static_cast<std::size_t>(n), 0.0f);
    std::vector<float> y(static_cast<std::size_t>(n) + 1, kSentinel);
    k::layernorm(isa(), x.data(), gamma.data(), beta.data(), y.data(), n);
    const auto moments = [n](const auto& v) {
      double mean = 0.0, var = 0.0;
      for (int i = 0; i < n; ++i) mean += v[static_cast<std::size_t>(i)];
      mean /= n;
      for (int i = 0; i < n; ++i) var += (v[static_cast<std::size_t>(i)] - mean) * (v[static_cast<std::size_t>(i)] - mean);
      return std::pair{mean, var / n};
    };
    const double var_x = moments(x).second;
    const auto [mean, var] = moments(y);
    EXPECT_NEAR(mean, 0.0, 1e-5) << "n=" << n;
    // Variance 1, less what eps takes (it matters when two samples happen to lie close).
    EXPECT_NEAR(var, var_x / (var_x + 1e-5), 1e-5) << "n=" << n;
    EXPECT_EQ(y[static_cast<std::size_t>(n)], kSentinel);
  }
}

TEST_P(Kernels, LayernormMatchesScalar) {
  for (int n : {1, 3, 15, 16, 17, 64, 100, 768}) {
    const auto x = random_floats(static_cast<std::size_t>(n), 800u + static_cast<unsigned>(n), -3.0f, 3.0f);
    const auto gamma = random_floats(static_cast<std::size_t>(n), 900u + static_cast<unsigned>(n), 0.5f, 1.5f);
    const auto beta = random_floats(static_cast<std::size_t>(n), 950u + static_cast<unsigned>(n));
    std::vector<float> want(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n));
    k::layernorm(Isa::Scalar, x.data(), gamma.data(), beta.data(), want.data(), n, 1e-5f);
    k::layernorm(isa(), x.data(), gamma.data(), beta.data(), got.data(), n, 1e-5f);
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)],
                  1e-5 * (1.0 + std::fabs(want[static_cast<std::size_t>(i)])))
          << "n=" << n << " i=" << i;
  }
}

TEST_P(Kernels, DefaultOverloadsUseTheActiveIsa) {
  ActiveIsaGuard guard;
  k::set_active_isa(isa());
  const int m = 20, n = 45, kk = 70;
  const auto a = random_floats(static_cast<std::size_t>(m) * kk, 1);
  const auto b = random_floats(static_cast<std::size_t>(kk) * n, 2);
  std::vector<float> explicit_c(static_cast<std::size_t>(m) * n), default_c(explicit_c.size());
  k::matmul(isa(), m, n, kk, a.data(), kk, b.data(), n, explicit_c.data(), n);
  k::matmul(m, n, kk, a.data(), kk, b.data(), n, default_c.data(), n);
  EXPECT_EQ(explicit_c, default_c);  // same code, same summation order: bit for bit
}

TEST_P(Kernels, ThreadsMatmulConcurrently) {
  // Each thread packs into its own scratch buffers.
  const int m = 100, n = 150, kk = 300;
  const auto a = random_floats(static_cast<std::size_t>(m) * kk, 3);
  const auto b = random_floats(static_cast<std::size_t>(kk) * n, 4);
  std::vector<float> want(static_cast<std::size_t>(m) * n);
  k::matmul(isa(), m, n, kk, a.data(), kk, b.data(), n, want.data(), n);
  std::vector<std::vector<float>> got(2, std::vector<float>(want.size()));
  std::vector<std::thread> threads;
  for (auto& g : got)
    threads.emplace_back([&, out = g.data()] {
      for (int rep = 0; rep < 20; ++rep) k::matmul(isa(), m, n, kk, a.data(), kk, b.data(), n, out, n);
    });
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Kernels, ::testing::Values(Isa::Scalar, Isa::Avx2, Isa::Avx512),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           switch (info.param) {
                             case Isa::Scalar: return std::string("Scalar");
                             case Isa::Avx2: return std::string("Avx2");
                             case Isa::Avx512: return std::string("Avx512");
                           }
                           return std::string("Unknown");
                         });

}  // namespace
