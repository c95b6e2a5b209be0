// Context, memory and error plumbing.
#include <gtest/gtest.h>

#include <string>

#include "gpuqr/context.hpp"
#include "gpuqr/error.hpp"
#include "gpuqr/matrix.hpp"
#include "tests/support/generators.hpp"

namespace gpuqr {
namespace {

TEST(Context, CpuDescribesItself) {
  const Context ctx = Context::cpu();
  EXPECT_EQ(ctx.backend(), Backend::cpu);
  EXPECT_EQ(ctx.device(), -1);
  EXPECT_EQ(ctx.stream(), nullptr);
  EXPECT_EQ(ctx.describe().rfind("cpu", 0), 0u);
  EXPECT_NO_THROW(ctx.synchronize());
  EXPECT_TRUE(ctx.check_finite());
}

TEST(Context, ParsesBackendChoices) {
  EXPECT_EQ(parse_backend_choice("auto"), BackendChoice::automatic);
  EXPECT_EQ(parse_backend_choice("cpu"), BackendChoice::cpu);
  EXPECT_EQ(parse_backend_choice("cuda"), BackendChoice::cuda);
  try {
    parse_backend_choice("gpu");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'gpu'"), std::string::npos);
  }
}

TEST(Context, BestFallsBackToCpuWithoutDevice) {
  const Context ctx = Context::best();
  EXPECT_EQ(ctx.backend(), cuda_devices().empty() ? Backend::cpu : Backend::cuda);
}

TEST(Context, CudaWithoutDeviceThrowsClearly) {
  if (!cuda_devices().empty()) GTEST_SKIP() << "a GPU is visible; this checks the no-GPU path";
  EXPECT_FALSE(cuda_unavailable_reason().empty());
  EXPECT_THROW(Context::cuda(0), Error);
  try {
    Context::from_choice(BackendChoice::cuda);
    FAIL() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("backend cuda was asked for"), std::string::npos);
  }
}

TEST(Error, WhatCarriesFileAndLine) {
  try {
    GPUQR_THROW(InvalidArgument, "bad thing");
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test_context.cpp:"), std::string::npos);
    EXPECT_NE(what.find(": bad thing"), std::string::npos);
    EXPECT_EQ(e.message(), "bad thing");
    EXPECT_GT(e.line(), 0);
  }
}

TEST(Matrix, ViewsCheckTheirShape) {
  double data[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_THROW(MatrixView<double>(data, 4, 3, 3), InvalidArgument);  // ld < rows
  EXPECT_THROW(MatrixView<double>(data, -1, 3, 4), InvalidArgument);
  EXPECT_THROW(MatrixView<double>(nullptr, 2, 2, 2), InvalidArgument);
  EXPECT_NO_THROW(MatrixView<double>(nullptr, 0, 0, 1));
  MatrixView<double> v(data, 4, 3, 4);
  EXPECT_EQ(v(1, 2), 10.0);
  MatrixView<double> b = v.block(1, 1, 2, 2);
  EXPECT_EQ(b(0, 0), 6.0);
  EXPECT_EQ(b(1, 1), 11.0);
  EXPECT_EQ(b.ld(), 4);
  EXPECT_THROW(v.block(3, 0, 2, 1), InvalidArgument);
  EXPECT_THROW(v.block(0, 2, 1, 2), InvalidArgument);
}

TEST(Matrix, OwnsMovesAndCopies) {
  Matrix<double> a = testing::random_matrix<double>(5, 3, 1);
  const double* p = a.data();
  Matrix<double> b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.rows(), 0);
  Matrix<double> c = b.clone();
  EXPECT_NE(c.data(), b.data());
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(c(i, j), b(i, j));
  // Copy out of a strided view.
  Matrix<double> d = Matrix<double>::copy_of(MatrixView<const double>(b.view().block(1, 1, 3, 2)));
  EXPECT_EQ(d.ld(), 3);
  EXPECT_EQ(d(2, 1), b(3, 2));
}

TEST(Matrix, DeviceMemoryWithoutCudaIsAClearError) {
  if (cuda_compiled() && !cuda_devices().empty()) GTEST_SKIP() << "a GPU is visible";
  EXPECT_THROW(Matrix<double>(4, 4, MemorySpace::device, 0), Error);
}

}  // namespace
}  // namespace gpuqr
