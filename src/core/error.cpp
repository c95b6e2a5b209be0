#include "gpuqr/error.hpp"

namespace gpuqr {

namespace {
std::string locate(const char* file, int line, const std::string& message) {
  return std::string(file) + ":" + std::to_string(line) + ": " + message;
}
}  // namespace

Error::Error(const char* file, int line, const std::string& message)
    : std::runtime_error(locate(file, line, message)), message_(message), file_(file),
      line_(line) {}

}  // namespace gpuqr
