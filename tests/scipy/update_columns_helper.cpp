// Helper of tests/scipy/check_update_columns.py: reads A (m x n), b (m), an operation and its
// data from a text file, runs it on an UpdatableQR<double> (CPU), prints R and x.
// Input (whitespace separated, column-major): op k p m n, then A, b, then U (m x p) for
// "add" / "rank", V (n x p) for "rank". op: add | remove | rank. Output: "R rows cols", values
// row by row, then "x n", values.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "gpuqr/update.hpp"

int main(int argc, char** argv) {
  using gpuqr::Matrix;
  using gpuqr::MatrixView;
  if (argc != 2) {
    std::cerr << "usage: gpuqr_update_columns_helper INPUT\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string op;
  std::int64_t k = 0, p = 0, m = 0, n = 0;
  if (!(in >> op >> k >> p >> m >> n)) return 2;
  auto read = [&](std::int64_t rows, std::int64_t cols) {
    Matrix<double> x(rows, cols);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) in >> x(i, j);
    return x;
  };
  const Matrix<double> a = read(m, n), b = read(m, 1);
  gpuqr::UpdatableQR<double> qr(gpuqr::Context::cpu(), a.view(), b.view());
  try {
    if (op == "remove") {
      qr.remove_columns(k, p);
    } else if (op == "add") {
      const Matrix<double> u = read(m, p);
      qr.add_columns(k, u.view());
    } else if (op == "rank") {
      const Matrix<double> u = read(m, p), v = read(n, p);
      qr.update_rank_k(u.view(), v.view());
    } else {
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  const Matrix<double> r = qr.matrix_r(), x = qr.solve();
  std::printf("R %lld %lld\n", static_cast<long long>(r.rows()), static_cast<long long>(r.cols()));
  for (std::int64_t i = 0; i < r.rows(); ++i) {
    for (std::int64_t j = 0; j < r.cols(); ++j) std::printf("%.17g ", r(i, j));
    std::printf("\n");
  }
  std::printf("x %lld\n", static_cast<long long>(x.rows()));
  for (std::int64_t i = 0; i < x.rows(); ++i) std::printf("%.17g\n", x(i, 0));
  return 0;
}
