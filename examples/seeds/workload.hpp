// The work the seed programs profile: a small dense layer (matmul + ReLU) on real data, a few
// milliseconds at most, standing in for the `model.forward(&input)` of the seeds.
#pragma once

#include <cstddef>
#include <vector>

namespace seeds {

/// An n x n matrix of floats, row-major.
struct Matrix {
  std::size_t n = 0;
  std::vector<float> values;

  static Matrix filled(std::size_t n, float value) { return Matrix{n, std::vector<float>(n * n, value)}; }
  /// A deterministic, non-constant matrix (so nothing folds away).
  static Matrix ramp(std::size_t n) {
    Matrix m{n, std::vector<float>(n * n)};
    for (std::size_t i = 0; i < m.values.size(); ++i) m.values[i] = static_cast<float>(i % 7) - 3.0f;
    return m;
  }
};

inline Matrix matmul(const Matrix& a, const Matrix& b) {
  Matrix c = Matrix::filled(a.n, 0.0f);
  for (std::size_t i = 0; i < a.n; ++i)
    for (std::size_t k = 0; k < a.n; ++k) {
      const float aik = a.values[i * a.n + k];
      for (std::size_t j = 0; j < a.n; ++j) c.values[i * a.n + j] += aik * b.values[k * a.n + j];
    }
  return c;
}

inline void relu(Matrix& x) {
  for (float& v : x.values) v = v > 0.0f ? v : 0.0f;
}

/// One linear layer with a ReLU: the "model" of the seed examples.
struct Model {
  Matrix weights;
  explicit Model(std::size_t n) : weights(Matrix::ramp(n)) {}
  [[nodiscard]] Matrix forward(const Matrix& input) const {
    Matrix out = matmul(input, weights);
    relu(out);
    return out;
  }
};

/// Sum of a result, printed or checked by the programs so the compiler keeps the work.
inline double checksum(const Matrix& m) {
  double sum = 0.0;
  for (float v : m.values) sum += v;
  return sum;
}

}  // namespace seeds
