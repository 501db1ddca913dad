// The kernels for AVX-512F (this file alone is compiled with -mavx512f; kernels.cpp calls it
// only on a CPU that has it). The algorithms are in kernels_simd.hpp.
//
// Microkernel: 6 rows × 64 columns of C in 24 zmm accumulators, 4 registers for B, one for
// the broadcast of A (29 of 32, none spilled).
// GCC 12's AVX-512 intrinsics initialise their "undefined" operand from itself, which its own
// -Wuninitialized flags at every inlined use (GCC bug 105593, fixed in 13): silenced for the
// header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "kernels_impl.hpp"
#include "kernels_simd.hpp"

namespace nnprof::transformer::kernels::detail {

namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int W = 16;
  // Blocked matmul: a 6×64 register tile (24 accumulators; per k, 4 aligned loads of packed B
  // and 6 broadcasts of A for 24 FMAs, fewer loads per FMA than 14×32, measured ~5% faster
  // at 128–256 and equal at 512). The B micro-panel, KC×64 floats = 32 KiB, stays in L1; the
  // A block, MC×KC = 96 KiB, in L2.
  static constexpr int kMR = 6, kNV = 4, kKC = 128, kMC = 192, kNC = 4096;
  // Direct (unpacked) kernel: when (see use_direct in kernels_simd.hpp); rows per block,
  // accumulators (of 32 registers) and vectors per row at most; B rows prefetched this far
  // ahead (+25% for a GEMV from L3; a single row reads 1 KiB per row of B, so fewer rows).
  static constexpr int kSmallM = 8;
  static constexpr long kDirectMaxBBytes = 1L << 20;
  static constexpr int kDirectMaxM = 64;
  static constexpr int kSmallR = 6, kAccumulators = 24, kSmallVMax = 16;
  static constexpr int kPrefetchRows = 8, kPrefetchRows1 = 4;
  // matmul_bt: 4 rows of A × 4 rows of B; a single row of A against 8 rows of B.
  static constexpr int kBtRA = 4, kBtRB = 4, kBtRB1 = 8;

  static __mmask16 mask(int valid) { return static_cast<__mmask16>((1u << valid) - 1u); }

  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec load(const float* p) { return _mm512_load_ps(p); }
  static Vec loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_store_ps(p, v); }
  static void storeu(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec load_part(const float* p, int valid) { return _mm512_maskz_loadu_ps(mask(valid), p); }
  static Vec load_part_fill(const float* p, int valid, float fill) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), mask(valid), p);
  }
  static void store_part(float* p, Vec v, int valid) { _mm512_mask_storeu_ps(p, mask(valid), v); }
  static Vec keep(Vec v, int valid) { return _mm512_maskz_mov_ps(mask(valid), v); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec fnmadd(Vec a, Vec b, Vec c) { return _mm512_fnmadd_ps(a, b, c); }
  static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec round(Vec x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // y·2^n, n integral: scalef does it in one instruction, whatever the range.
  static Vec ldexp(Vec y, Vec n) { return _mm512_scalef_ps(y, n); }
  static Vec zero_if_less(Vec v, Vec x, Vec limit) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, limit, _CMP_NLT_UQ), v);
  }
  static float reduce_add(Vec v) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  static float reduce_max(Vec v) {
    const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  // Four horizontal sums at once: interleave pairs and add (each add halves the lanes that
  // still hold partial sums), then fold the 128-bit lanes.
  static void reduce4_store(Vec a, Vec b, Vec c, Vec d, float* out) {
    const Vec ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));  // a0+a2 b0+b2 a1+a3 b1+b3
    const Vec cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
    const Vec abcd = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(ab), _mm512_castps_pd(cd))),
                                   _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(ab), _mm512_castps_pd(cd))));
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(abcd),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(abcd), 1)));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  }
};

constexpr Table kTable = simd::make_table<Avx512>();

}  // namespace

const Table& avx512_table() noexcept { return kTable; }

}  // namespace nnprof::transformer::kernels::detail
