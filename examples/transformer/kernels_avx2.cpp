// The kernels for AVX2 + FMA (this file alone is compiled with -mavx2 -mfma; kernels.cpp calls
// it only on a CPU that has both). The algorithms are in kernels_simd.hpp.
//
// Microkernel: 6 rows × 16 columns of C in 12 ymm accumulators, 2 registers for B and one
// for the broadcast of A: 15 of the 16 registers.
#include <immintrin.h>

#include "kernels_impl.hpp"
#include "kernels_simd.hpp"

namespace nnprof::transformer::kernels::detail {

namespace {

struct Avx2 {
  using Vec = __m256;
  static constexpr int W = 8;
  // Blocked matmul: the B micro-panel, KC×16 floats = 16 KiB, stays in L1; the A block,
  // MC×KC = 144 KiB, in L2.
  static constexpr int kMR = 6, kNV = 2, kKC = 256, kMC = 6 * 24, kNC = 4096;
  // Direct kernel (see kernels_avx512.cpp): accumulators ≤ 12 of the 16 registers.
  static constexpr int kSmallM = 8;
  static constexpr long kDirectMaxBBytes = 1L << 20;
  static constexpr int kDirectMaxM = 64;
  static constexpr int kSmallR = 6, kAccumulators = 12, kSmallVMax = 8;
  static constexpr int kPrefetchRows = 4, kPrefetchRows1 = 4;
  static constexpr int kBtRA = 2, kBtRB = 4, kBtRB1 = 8;

  // Lanes [0, valid) set: the sign bit is what vmaskmov reads.
  static __m256i mask(int valid) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }

  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec load(const float* p) { return _mm256_load_ps(p); }
  static Vec loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_store_ps(p, v); }
  static void storeu(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec load_part(const float* p, int valid) { return _mm256_maskload_ps(p, mask(valid)); }
  static Vec load_part_fill(const float* p, int valid, float fill) {
    const __m256i m = mask(valid);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void store_part(float* p, Vec v, int valid) { _mm256_maskstore_ps(p, mask(valid), v); }
  static Vec keep(Vec v, int valid) { return _mm256_and_ps(v, _mm256_castsi256_ps(mask(valid))); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec fnmadd(Vec a, Vec b, Vec c) { return _mm256_fnmadd_ps(a, b, c); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec round(Vec x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // y·2^n for integral n in [-126, 127] (exp clamps its argument so that n stays there): n is
  // built directly as the exponent field of a float.
  static Vec ldexp(Vec y, Vec n) {
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
  }
  static Vec zero_if_less(Vec v, Vec x, Vec limit) { return _mm256_and_ps(v, _mm256_cmp_ps(x, limit, _CMP_NLT_UQ)); }
  static float reduce_add(Vec v) {
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  static float reduce_max(Vec v) {
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  static void reduce4_store(Vec a, Vec b, Vec c, Vec d, float* out) {
    const Vec ab = _mm256_add_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
    const Vec cd = _mm256_add_ps(_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
    const Vec abcd = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(ab), _mm256_castps_pd(cd))),
                                   _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(ab), _mm256_castps_pd(cd))));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
  }
};

constexpr Table kTable = simd::make_table<Avx2>();

}  // namespace

const Table& avx2_table() noexcept { return kTable; }

}  // namespace nnprof::transformer::kernels::detail
