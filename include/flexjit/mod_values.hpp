#pragma once
/// \file
/// ModValues: the call-time values of a variant's declared parameters and buffers. Parameters are
/// kernel arguments and buffers are device pointers, so changing them never recompiles.

#include <map>
#include <string>

#include "flexjit/tensor.hpp"

namespace flexjit {

/// Values for the parameters and buffers a score_mod / mask_mod declared.
struct ModValues {
  std::map<std::string, double> params;       ///< by name; ints are given as whole numbers
  std::map<std::string, TensorView> buffers;  ///< by name; device memory, dtype and rank as declared

  /// Sets a parameter and returns *this (for chaining).
  ModValues& param(const std::string& name, double value) {
    params[name] = value;
    return *this;
  }
  /// Sets a buffer and returns *this (for chaining).
  ModValues& buffer(const std::string& name, const TensorView& view) {
    buffers[name] = view;
    return *this;
  }
};

}  // namespace flexjit
