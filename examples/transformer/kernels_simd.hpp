// The SIMD kernels, written once over a vector "traits" type T and included by
// kernels_avx2.cpp and kernels_avx512.cpp, each of which defines its traits (in an anonymous
// namespace) and is compiled for its instruction set.
//
// Everything here is a template of the traits, so every instantiation has internal linkage:
// no function compiled for AVX-512 can be merged by the linker into baseline code. For the
// same reason this header includes no standard-library header with inline functions.
//
// A traits type T provides:
//   using Vec; static constexpr int W (floats per vector);
//   zero, set1, load (64-byte aligned), loadu, storeu, store (aligned),
//   load_part(p, valid) (lanes >= valid read as 0, never touched in memory),
//   load_part_fill(p, valid, fill), store_part(p, v, valid), keep(v, valid) (zero lanes >= valid),
//   fmadd(a, b, c) = a·b + c, fnmadd(a, b, c) = c − a·b, add, sub, mul, div, min, max,
//   round (to nearest), ldexp(y, n) = y·2^n, zero_if_less(v, x, limit),
//   reduce_add, reduce_max, reduce4_store(a, b, c, d, out) (out[i] = sum of lanes of the i-th);
//   and the blocking constants kMR, kNV, kKC, kMC, kNC, kSmallM, kDirectMaxBBytes, kDirectMaxM,
//   kSmallR, kAccumulators, kSmallVMax, kPrefetchRows, kPrefetchRows1, kBtRA, kBtRB, kBtRB1.
#pragma once

namespace nnprof::transformer::kernels::simd {

// ---------------------------------------------------------------------------------------------
// exp: Cephes' expf. x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two so that n·ln2 is exact),
// e^r by a degree-7 polynomial, 2^n put into the exponent. About 1 ulp over the clamped range.
// ---------------------------------------------------------------------------------------------
inline constexpr float kExpHi = 88.0f;       // e^88 < FLT_MAX; 2^n stays a normal number
inline constexpr float kExpLo = -87.33654f;  // e^x < FLT_MIN below this: the result is 0

template <class T>
typename T::Vec exp(typename T::Vec x0) {
  using Vec = typename T::Vec;
  const Vec x = T::max(T::min(x0, T::set1(kExpHi)), T::set1(kExpLo));
  const Vec n = T::round(T::mul(x, T::set1(1.44269504088896341f)));
  Vec r = T::fnmadd(n, T::set1(0.693359375f), x);
  r = T::fnmadd(n, T::set1(-2.12194440e-4f), r);
  Vec p = T::set1(1.9875691500e-4f);
  p = T::fmadd(p, r, T::set1(1.3981999507e-3f));
  p = T::fmadd(p, r, T::set1(8.3334519073e-3f));
  p = T::fmadd(p, r, T::set1(4.1665795894e-2f));
  p = T::fmadd(p, r, T::set1(1.6666665459e-1f));
  p = T::fmadd(p, r, T::set1(5.0000001201e-1f));
  p = T::fmadd(p, T::mul(r, r), T::add(r, T::set1(1.0f)));
  // Below kExpLo the true value is denormal or 0; 0 is what softmax and GELU want.
  return T::zero_if_less(T::ldexp(p, n), x0, T::set1(kExpLo));
}

// ---------------------------------------------------------------------------------------------
// matmul, small m (decoding: m = 1 is y = x·W): no packing. Each block keeps R rows × V vectors
// of C in registers and streams the rows of B once, broadcasting a[r][p]: for m = 1 that is a
// read of B at memory speed with V independent FMA chains.
// ---------------------------------------------------------------------------------------------
template <class T, int R, int V, bool Masked>
void direct_block(int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc, int last_valid,
                  bool accumulate) {
  using Vec = typename T::Vec;
  constexpr int W = T::W;
  constexpr int prefetch_rows = R == 1 ? T::kPrefetchRows1 : T::kPrefetchRows;
  Vec acc[R][V];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) acc[r][v] = T::zero();
  for (int p = 0; p < k; ++p) {
    const float* bp = b + static_cast<long>(p) * ldb;
    if constexpr (prefetch_rows > 0) {
#pragma GCC unroll 32
      for (int v = 0; v < V * W; v += 16) __builtin_prefetch(bp + static_cast<long>(prefetch_rows) * ldb + v);
    }
    Vec bv[V];
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v)
      bv[v] = (Masked && v == V - 1) ? T::load_part(bp + v * W, last_valid) : T::loadu(bp + v * W);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const Vec av = T::set1(a[static_cast<long>(r) * lda + p]);
#pragma GCC unroll 32
      for (int v = 0; v < V; ++v) acc[r][v] = T::fmadd(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
    float* cr = c + static_cast<long>(r) * ldc;
#pragma GCC unroll 32
    for (int v = 0; v < V; ++v) {
      const bool part = Masked && v == V - 1;
      Vec out = acc[r][v];
      if (accumulate) out = T::add(out, part ? T::load_part(cr + v * W, last_valid) : T::loadu(cr + v * W));
      if (part)
        T::store_part(cr + v * W, out, last_valid);
      else
        T::storeu(cr + v * W, out);
    }
  }
}

// Columns [j, n) of R rows: full blocks of V vectors, then narrower blocks (V/2, V/4, ...) for
// what is left, the last vector masked, so an odd n costs a few narrow blocks, not a scalar loop.
template <class T, int R, int V>
void direct_columns(int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                    bool accumulate) {
  constexpr int W = T::W;
  int j = 0;
  for (; j + V * W <= n; j += V * W) direct_block<T, R, V, false>(k, a, lda, b + j, ldb, c + j, ldc, W, accumulate);
  if constexpr (V > 1) {
    if (j < n) direct_columns<T, R, V / 2>(n - j, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  } else {
    if (j < n) direct_block<T, R, 1, true>(k, a, lda, b + j, ldb, c + j, ldc, n - j, accumulate);
  }
}

// Vectors per block for R rows: as many as leave registers for B and the broadcast (at most
// T::kAccumulators accumulators), a power of two so that direct_columns can halve it.
template <class T>
constexpr int small_vectors(int rows) {
  int v = T::kSmallVMax;
  while (v > 1 && v * rows > T::kAccumulators) v /= 2;
  return v;
}

// The last m % kSmallR rows, R chosen at compile time.
template <class T, int R>
void small_m_rest(int rest, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                  bool accumulate) {
  if constexpr (R > 0) {
    if (rest == R)
      direct_columns<T, R, small_vectors<T>(R)>(n, k, a, lda, b, ldb, c, ldc, accumulate);
    else
      small_m_rest<T, R - 1>(rest, n, k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

// Rows in groups of kSmallR, then the rest.
template <class T>
void matmul_small_m(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                    bool accumulate) {
  constexpr int R = T::kSmallR;
  int i = 0;
  for (; i + R <= m; i += R)
    direct_columns<T, R, small_vectors<T>(R)>(n, k, a + static_cast<long>(i) * lda, lda, b, ldb,
                                              c + static_cast<long>(i) * ldc, ldc, accumulate);
  if (i < m)
    small_m_rest<T, R - 1>(m - i, n, k, a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc,
                           accumulate);
}

// ---------------------------------------------------------------------------------------------
// matmul, blocked (Goto/BLIS): B is packed into k-panels of NR columns (NR = NV vectors),
// A into MR-row panels stored k-major, so the microkernel reads both contiguously: per k,
// NV aligned loads of B and MR broadcasts of A feed MR·NV FMAs on accumulators that stay in
// registers for the whole panel. The B micro-panel (KC×NR) is reused by every A panel of
// the block and stays in L1; the A block (MC×KC) stays in L2.
// ---------------------------------------------------------------------------------------------
template <class T>
void pack_b(int kc, int nc, const float* b, int ldb, float* dst) {
  constexpr int W = T::W, NV = T::kNV, NR = NV * W;
  for (int j = 0; j < nc; j += NR) {
    const int w = nc - j < NR ? nc - j : NR;
    const float* src = b + j;
    if (w == NR) {
      for (int p = 0; p < kc; ++p, src += ldb, dst += NR)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) T::store(dst + v * W, T::loadu(src + v * W));
    } else {
      // A narrow last panel is padded with zero columns: the microkernel always computes
      // NR columns and stores only the real ones.
      for (int p = 0; p < kc; ++p, src += ldb, dst += NR)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
          const int valid = w - v * W;
          T::store(dst + v * W, valid >= W  ? T::loadu(src + v * W)
                                : valid > 0 ? T::load_part(src + v * W, valid)
                                            : T::zero());
        }
    }
  }
}

template <class T>
void pack_a(int mc, int kc, const float* a, int lda, float* dst) {
  constexpr int MR = T::kMR;
  for (int i = 0; i < mc; i += MR) {
    const int h = mc - i < MR ? mc - i : MR;
    const float* src = a + static_cast<long>(i) * lda;
    if (h == MR) {
      for (int p = 0; p < kc; ++p, dst += MR)
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) dst[r] = src[static_cast<long>(r) * lda + p];
    } else {
      for (int p = 0; p < kc; ++p, dst += MR)
        for (int r = 0; r < MR; ++r) dst[r] = r < h ? src[static_cast<long>(r) * lda + p] : 0.0f;
    }
  }
}

// C[mr×nr] (+)= Apanel · Bpanel over kc. Rows >= mr and columns >= nr are computed on the
// zero padding and not stored.
template <class T>
void microkernel(int kc, const float* __restrict ap, const float* __restrict bp, float* c, int ldc, int mr, int nr,
                 bool accumulate) {
  using Vec = typename T::Vec;
  constexpr int W = T::W, NV = T::kNV, MR = T::kMR;
  Vec acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[r][v] = T::zero();
  for (int p = 0; p < kc; ++p) {
    Vec bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = T::load(bp + v * W);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      const Vec av = T::set1(ap[r]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = T::fmadd(av, bv[v], acc[r][v]);
    }
    ap += MR;
    bp += NV * W;
  }
  if (nr == NV * W) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      float* cr = c + static_cast<long>(r) * ldc;
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v)
        T::storeu(cr + v * W, accumulate ? T::add(acc[r][v], T::loadu(cr + v * W)) : acc[r][v]);
    }
  } else {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      float* cr = c + static_cast<long>(r) * ldc;
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const int valid = nr - v * W;
        if (valid <= 0) break;
        if (valid >= W)
          T::storeu(cr + v * W, accumulate ? T::add(acc[r][v], T::loadu(cr + v * W)) : acc[r][v]);
        else
          T::store_part(cr + v * W, accumulate ? T::add(acc[r][v], T::load_part(cr + v * W, valid)) : acc[r][v],
                        valid);
      }
    }
  }
}

// Whether the direct kernel (B streamed once per group of rows, unpacked) beats packing B,
// as measured on Zen 5 with n, k in 768..3072: always for a few rows (packing B would cost as
// much as the product); for a B that fits in L2 (up to 15% faster at 128³ and 256³, equal at
// 512³); and up to 64 rows whatever B's size, unless B's rows lie a multiple of 4 KiB apart:
// then every row of B maps to the same L1 sets, prefetched lines are evicted before use, and
// the direct kernel loses ~35% where the packed one (which reads B once per call) loses little.
template <class T>
bool use_direct(int m, int n, int k, int ldb) {
  if (m < T::kSmallM) return true;
  const long b_bytes = static_cast<long>(k) * n * static_cast<long>(sizeof(float));
  if (b_bytes < T::kDirectMaxBBytes) return true;
  const bool aliased_rows = (static_cast<long>(ldb) * static_cast<long>(sizeof(float))) % 4096 == 0;
  return m <= T::kDirectMaxM && !aliased_rows;
}

template <class T>
void matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // A·B of an empty inner dimension is zero.
    if (!accumulate)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) c[static_cast<long>(i) * ldc + j] = 0.0f;
    return;
  }
  if (use_direct<T>(m, n, k, ldb)) {
    matmul_small_m<T>(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    return;
  }
  constexpr int MR = T::kMR, NR = T::kNV * T::W, KC = T::kKC, MC = T::kMC, NC = T::kNC;
  const auto round_up = [](int x, int to) { return (x + to - 1) / to * to; };
  const int nc_max = n < NC ? n : NC, kc_max = k < KC ? k : KC, mc_max = m < MC ? m : MC;
  float* bpack = detail::scratch(detail::Scratch::PackedB,
                                 static_cast<unsigned long>(round_up(nc_max, NR)) * static_cast<unsigned long>(kc_max));
  float* apack = detail::scratch(detail::Scratch::PackedA,
                                 static_cast<unsigned long>(round_up(mc_max, MR)) * static_cast<unsigned long>(kc_max));
  for (int jc = 0; jc < n; jc += NC) {
    const int nc = n - jc < NC ? n - jc : NC;
    for (int pc = 0; pc < k; pc += KC) {
      const int kc = k - pc < KC ? k - pc : KC;
      // The first k-block writes C (or adds to it when asked), the later ones add.
      const bool add = accumulate || pc > 0;
      pack_b<T>(kc, nc, b + static_cast<long>(pc) * ldb + jc, ldb, bpack);
      for (int ic = 0; ic < m; ic += MC) {
        const int mc = m - ic < MC ? m - ic : MC;
        pack_a<T>(mc, kc, a + static_cast<long>(ic) * lda + pc, lda, apack);
        for (int jr = 0; jr < nc; jr += NR) {
          const int nr = nc - jr < NR ? nc - jr : NR;
          for (int ir = 0; ir < mc; ir += MR) {
            const int mr = mc - ir < MR ? mc - ir : MR;
            microkernel<T>(kc, apack + static_cast<long>(ir) * kc, bpack + static_cast<long>(jr) * kc,
                           c + static_cast<long>(ic + ir) * ldc + jc + jr, ldc, mr, nr, add);
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// matmul_bt: C[i][j] = a_i · b_j. RA rows of A against RB rows of B at a time, one vector
// accumulator per pair, reduced four at a time at the end (the reduction is the costly part
// when k is a head dimension of 32 or 64).
// ---------------------------------------------------------------------------------------------
template <class T, int RA, int RB>
void bt_block(int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  using Vec = typename T::Vec;
  constexpr int W = T::W;
  Vec acc[RA][RB];
#pragma GCC unroll 16
  for (int r = 0; r < RA; ++r)
#pragma GCC unroll 16
    for (int s = 0; s < RB; ++s) acc[r][s] = T::zero();
  int p = 0;
  for (; p + W <= k; p += W) {
    Vec bv[RB];
#pragma GCC unroll 16
    for (int s = 0; s < RB; ++s) bv[s] = T::loadu(b + static_cast<long>(s) * ldb + p);
#pragma GCC unroll 16
    for (int r = 0; r < RA; ++r) {
      const Vec av = T::loadu(a + static_cast<long>(r) * lda + p);
#pragma GCC unroll 16
      for (int s = 0; s < RB; ++s) acc[r][s] = T::fmadd(av, bv[s], acc[r][s]);
    }
  }
  if (p < k) {
    const int valid = k - p;
    Vec bv[RB];
#pragma GCC unroll 16
    for (int s = 0; s < RB; ++s) bv[s] = T::load_part(b + static_cast<long>(s) * ldb + p, valid);
#pragma GCC unroll 16
    for (int r = 0; r < RA; ++r) {
      const Vec av = T::load_part(a + static_cast<long>(r) * lda + p, valid);
#pragma GCC unroll 16
      for (int s = 0; s < RB; ++s) acc[r][s] = T::fmadd(av, bv[s], acc[r][s]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < RA; ++r) {
    float* cr = c + static_cast<long>(r) * ldc;
    if constexpr (RB % 4 == 0) {
#pragma GCC unroll 16
      for (int s = 0; s < RB; s += 4) T::reduce4_store(acc[r][s], acc[r][s + 1], acc[r][s + 2], acc[r][s + 3], cr + s);
    } else {
#pragma GCC unroll 16
      for (int s = 0; s < RB; ++s) cr[s] = T::reduce_add(acc[r][s]);
    }
  }
}

template <class T, int RA>
void bt_rows(int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  constexpr int RB = RA == 1 ? T::kBtRB1 : T::kBtRB;
  int j = 0;
  for (; j + RB <= n; j += RB) bt_block<T, RA, RB>(k, a, lda, b + static_cast<long>(j) * ldb, ldb, c + j, ldc);
  for (; j + 4 <= n; j += 4) bt_block<T, RA, 4>(k, a, lda, b + static_cast<long>(j) * ldb, ldb, c + j, ldc);
  for (; j < n; ++j) bt_block<T, RA, 1>(k, a, lda, b + static_cast<long>(j) * ldb, ldb, c + j, ldc);
}

template <class T>
void matmul_bt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  if (m <= 0 || n <= 0) return;
  constexpr int RA = T::kBtRA;
  int i = 0;
  for (; i + RA <= m; i += RA)
    bt_rows<T, RA>(n, k, a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc);
  for (; i < m; ++i) bt_rows<T, 1>(n, k, a + static_cast<long>(i) * lda, lda, b, ldb, c + static_cast<long>(i) * ldc, ldc);
}

// ---------------------------------------------------------------------------------------------
// Element-wise kernels. Tails are masked vectors, never a scalar loop.
// ---------------------------------------------------------------------------------------------
template <class T>
void add_inplace(float* y, const float* x, int n) {
  constexpr int W = T::W;
  int i = 0;
  for (; i + W <= n; i += W) T::storeu(y + i, T::add(T::loadu(y + i), T::loadu(x + i)));
  if (i < n) T::store_part(y + i, T::add(T::load_part(y + i, n - i), T::load_part(x + i, n - i)), n - i);
}

template <class T>
void add_bias(float* y, const float* bias, int n) {
  add_inplace<T>(y, bias, n);
}

template <class T>
void softmax(float* x, int n) {
  using Vec = typename T::Vec;
  constexpr int W = T::W;
  if (n <= 0) return;
  constexpr float kNegInf = -__builtin_inff();
  Vec mx = T::set1(kNegInf);
  int i = 0;
  for (; i + W <= n; i += W) mx = T::max(mx, T::loadu(x + i));
  if (i < n) mx = T::max(mx, T::load_part_fill(x + i, n - i, kNegInf));
  const Vec vmax = T::set1(T::reduce_max(mx));
  // Two sums: the exp's latency, not the add, bounds this loop.
  Vec sum0 = T::zero(), sum1 = T::zero();
  i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec e0 = exp<T>(T::sub(T::loadu(x + i), vmax));
    const Vec e1 = exp<T>(T::sub(T::loadu(x + i + W), vmax));
    T::storeu(x + i, e0);
    T::storeu(x + i + W, e1);
    sum0 = T::add(sum0, e0);
    sum1 = T::add(sum1, e1);
  }
  for (; i + W <= n; i += W) {
    const Vec e = exp<T>(T::sub(T::loadu(x + i), vmax));
    T::storeu(x + i, e);
    sum0 = T::add(sum0, e);
  }
  if (i < n) {
    const Vec e = T::keep(exp<T>(T::sub(T::load_part(x + i, n - i), vmax)), n - i);
    T::store_part(x + i, e, n - i);
    sum0 = T::add(sum0, e);
  }
  const Vec inv = T::set1(1.0f / T::reduce_add(T::add(sum0, sum1)));
  i = 0;
  for (; i + W <= n; i += W) T::storeu(x + i, T::mul(T::loadu(x + i), inv));
  if (i < n) T::store_part(x + i, T::mul(T::load_part(x + i, n - i), inv), n - i);
}

// 0.5·x·(1 + tanh(u)) = x·sigmoid(2u) = x / (1 + e^(−2u)), u = √(2/π)·(x + 0.044715·x³): one exp and
// one division, and no cancellation in 1 + tanh(u) for negative x.
template <class T>
typename T::Vec gelu_vec(typename T::Vec x) {
  const auto x2 = T::mul(x, x);
  const auto u2 = T::mul(T::mul(x, T::set1(-2.0f * 0.7978845608028654f)), T::fmadd(x2, T::set1(0.044715f), T::set1(1.0f)));
  return T::div(x, T::add(T::set1(1.0f), exp<T>(u2)));
}

template <class T>
void gelu(float* x, int n) {
  constexpr int W = T::W;
  int i = 0;
  for (; i + W <= n; i += W) T::storeu(x + i, gelu_vec<T>(T::loadu(x + i)));
  if (i < n) T::store_part(x + i, gelu_vec<T>(T::load_part(x + i, n - i)), n - i);
}

// Two passes (mean, then the sum of squared deviations): as cheap as one for a row that sits
// in L1, and without the cancellation of E[x²] − E[x]².
template <class T>
void layernorm(const float* x, const float* gamma, const float* beta, float* y, int n, float eps) {
  using Vec = typename T::Vec;
  constexpr int W = T::W;
  if (n <= 0) return;
  Vec s0 = T::zero(), s1 = T::zero();
  int i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    s0 = T::add(s0, T::loadu(x + i));
    s1 = T::add(s1, T::loadu(x + i + W));
  }
  for (; i + W <= n; i += W) s0 = T::add(s0, T::loadu(x + i));
  if (i < n) s1 = T::add(s1, T::load_part(x + i, n - i));
  const float mean = T::reduce_add(T::add(s0, s1)) / static_cast<float>(n);
  const Vec vmean = T::set1(mean);
  s0 = T::zero();
  s1 = T::zero();
  i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec d0 = T::sub(T::loadu(x + i), vmean), d1 = T::sub(T::loadu(x + i + W), vmean);
    s0 = T::fmadd(d0, d0, s0);
    s1 = T::fmadd(d1, d1, s1);
  }
  for (; i + W <= n; i += W) {
    const Vec d = T::sub(T::loadu(x + i), vmean);
    s0 = T::fmadd(d, d, s0);
  }
  if (i < n) {
    const Vec d = T::keep(T::sub(T::load_part(x + i, n - i), vmean), n - i);
    s1 = T::fmadd(d, d, s1);
  }
  const float var = T::reduce_add(T::add(s0, s1)) / static_cast<float>(n);
  const Vec rstd = T::set1(1.0f / __builtin_sqrtf(var + eps));
  i = 0;
  for (; i + W <= n; i += W) {
    const Vec xn = T::mul(T::sub(T::loadu(x + i), vmean), rstd);
    T::storeu(y + i, T::fmadd(xn, T::loadu(gamma + i), T::loadu(beta + i)));
  }
  if (i < n) {
    const int v = n - i;
    const Vec xn = T::mul(T::sub(T::load_part(x + i, v), vmean), rstd);
    T::store_part(y + i, T::fmadd(xn, T::load_part(gamma + i, v), T::load_part(beta + i, v)), v);
  }
}

/// The table of one instruction set's kernels.
template <class T>
constexpr detail::Table make_table() {
  return {matmul<T>, matmul_bt<T>, add_bias<T>, add_inplace<T>, softmax<T>, gelu<T>, layernorm<T>};
}

}  // namespace nnprof::transformer::kernels::simd
