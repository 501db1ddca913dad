// Internal to the kernels: the table of functions each instruction set provides, and the
// scratch memory the blocked matmul packs its panels into.
#pragma once

#include <cstddef>

#include "kernels.hpp"

namespace nnprof::transformer::kernels::detail {

/// One instruction set's kernels, with the signatures of the public functions.
struct Table {
  void (*matmul)(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                 bool accumulate);
  void (*matmul_bt)(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc);
  void (*add_bias)(float* y, const float* bias, int n);
  void (*add_inplace)(float* y, const float* x, int n);
  void (*softmax)(float* x, int n);
  void (*gelu)(float* x, int n);
  void (*layernorm)(const float* x, const float* gamma, const float* beta, float* y, int n, float eps);
};

// Each defined in the file compiled for that instruction set. Taking the address of a table
// runs none of its code: kernels.cpp calls through it only after checking the CPU.
const Table& scalar_table() noexcept;
const Table& avx2_table() noexcept;
const Table& avx512_table() noexcept;

/// Scratch slots of the matmul (packed B panel, packed A block).
enum class Scratch : int { PackedB = 0, PackedA = 1 };

/// A 64-byte aligned buffer of at least `floats` floats, owned by the calling thread and
/// reused across calls (grown, never shrunk), so that no matmul allocates in steady state.
/// Defined in kernels.cpp: the per-ISA files include no standard-library code, so that no
/// inline function compiled there for AVX-512 can be picked by the linker for baseline code.
float* scratch(Scratch slot, std::size_t floats);

}  // namespace nnprof::transformer::kernels::detail
