// An environment variable set for a scope (for the leaves that read their knobs on every
// call), restored (or unset) when the scope ends, however the test ends.
#pragma once

#include <cstdlib>
#include <string>

namespace gpuqr::testing {

class EnvKnob {
 public:
  EnvKnob(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~EnvKnob() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  EnvKnob(const EnvKnob&) = delete;
  EnvKnob& operator=(const EnvKnob&) = delete;

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace gpuqr::testing
