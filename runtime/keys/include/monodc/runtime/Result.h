//===- Result.h - errors as values in the LLVM-free runtime -----*- C++ -*-===//
//
// The runtime library builds without LLVM, so it cannot use llvm::Expected.
// Status is success or one error message; Result<T> is a value or an error.
// Both are [[nodiscard]]: an ignored error is a compiler warning.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_RESULT_H
#define MONODC_RUNTIME_RESULT_H

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace monodc::runtime {

/// An error message: one line a user can act on (what failed, and why).
struct Error {
  std::string message;
};

inline Error makeError(std::string message) { return Error{std::move(message)}; }

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : message_(std::move(error.message)), failed_(true) {}
  static Status success() { return {}; }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return message_; }
  Error error() const { return Error{message_}; }

private:
  std::string message_;
  bool failed_ = false;
};

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T &value() & {
    assert(ok() && "value() of a failed Result");
    return std::get<0>(state_);
  }
  const T &value() const & {
    assert(ok() && "value() of a failed Result");
    return std::get<0>(state_);
  }
  T &&value() && {
    assert(ok() && "value() of a failed Result");
    return std::get<0>(std::move(state_));
  }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  /// The message of a failed Result.
  const std::string &message() const {
    assert(!ok() && "message() of a successful Result");
    return std::get<1>(state_).message;
  }
  Error error() const { return std::get<1>(state_); }
  Status status() const { return ok() ? Status::success() : Status(error()); }

private:
  std::variant<T, Error> state_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_RESULT_H
