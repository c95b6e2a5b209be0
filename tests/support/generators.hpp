// Test and benchmark inputs: random and structured matrices, never zeros.
#pragma once

#include <cstdint>
#include <string>

#include "gpuqr/dense.hpp"
#include "gpuqr/matrix.hpp"

namespace gpuqr::testing {

enum class MatrixKind {
  random,          // entries uniform in (-1, 1)
  graded,          // random, column j scaled by 10^(-g j / n): g = 6 (double), 3 (float)
  ill_conditioned, // U diag(sigma) V^T, sigma geometric from 1 to 1/cond
  rank_deficient,  // product of m x r and r x n random factors, r = n / 2 (at least 1)
};

const char* to_string(MatrixKind kind);

/// A host m x n matrix of `kind`, from `seed`; `cond` is used by ill_conditioned.
template <class T>
Matrix<T> make_matrix(MatrixKind kind, std::int64_t m, std::int64_t n, std::uint64_t seed,
                      double cond = 1e6);

/// U diag(B_1, ..., B_k): U m x n with orthonormal columns, B_i nb x nb (the last one
/// smaller when nb does not divide n) with singular values geometric from 1 to 1 / cond, so
/// that kappa_2 = cond and the column blocks are orthogonal to each other (block-Jacobi's
/// best case). Computed in double, host memory.
template <class T>
Matrix<T> block_orthogonal_matrix(std::int64_t m, std::int64_t n, std::int64_t nb,
                                  std::uint64_t seed, double cond);

/// Entries uniform in (-1, 1) (never exactly zero), host memory.
template <class T>
Matrix<T> random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed);

/// A copy of `a` whose leading dimension is rows + pad (views of it exercise ld > m).
template <class T>
struct Padded {
  Matrix<T> storage;
  MatrixView<T> view;
};
template <class T>
Padded<T> padded_copy(MatrixView<const T> a, std::int64_t pad);

/// op(Q) C (left) or C op(Q) (right) by explicit products in double, Q m x m: the reference
/// that ormqr is checked against.
template <class T>
Matrix<T> apply_explicit_q(Side side, Op op, const Matrix<T>& q, const Matrix<T>& c);

}  // namespace gpuqr::testing
