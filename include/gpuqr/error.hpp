// gpuqr/error.hpp: the exceptions every gpuqr function throws.
//
// Errors are exceptions whose what() reads "file:line: message". Numerical outcomes
// (a singular triangle, rank deficiency) are never thrown: they come back in info structs.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuqr {

/// Base of every gpuqr exception. what() is "file:line: message".
class Error : public std::runtime_error {
 public:
  Error(const char* file, int line, const std::string& message);
  const std::string& message() const noexcept { return message_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  std::string message_;
  const char* file_;
  int line_;
};

/// A caller error: wrong dimensions, leading dimension, memory space, NaN/Inf input.
class InvalidArgument : public Error {
  using Error::Error;
};

/// A malformed or unreadable file (Matrix Market); the message names file and line.
class IoError : public Error {
  using Error::Error;
};

/// An input the library does not handle yet (complex Matrix Market files, say).
class Unsupported : public Error {
  using Error::Error;
};

/// A CUDA runtime call failed; the message holds the call and cudaGetErrorString's text.
class CudaError : public Error {
  using Error::Error;
};

/// A cuBLAS call failed; the message holds the call and the status name.
class CublasError : public Error {
  using Error::Error;
};

/// A cuSOLVER call failed; the message holds the call and the status name.
class CusolverError : public Error {
  using Error::Error;
};

/// An allocation failed (host or device); the message says how many bytes and where.
class OutOfMemory : public Error {
  using Error::Error;
};

/// The operation needs a backend this build does not have (CUDA switched off).
class NotCompiled : public Error {
  using Error::Error;
};

}  // namespace gpuqr

/// Throws `Type` with the current file and line; `message` is a std::string expression.
#define GPUQR_THROW(Type, message) throw Type(__FILE__, __LINE__, (message))

/// Throws InvalidArgument naming the violated condition when `cond` is false.
#define GPUQR_CHECK_ARG(cond, message)                                           \
  do {                                                                           \
    if (!(cond)) {                                                               \
      GPUQR_THROW(::gpuqr::InvalidArgument,                                      \
                  std::string(message) + " (violated: " #cond ")");              \
    }                                                                            \
  } while (0)
