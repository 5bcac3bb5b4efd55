#pragma once
#include <stdexcept>
#include <string>

namespace poolkit {

// What kind of mistake the caller made; the Python layer maps each to its exception class.
enum class ErrorKind { Value, Type, Index, Overflow };

// Every rejected request raises this. The message names the argument and the rule broken.
class Error : public std::invalid_argument {
 public:
  Error(ErrorKind kind, std::string argument, const std::string& rule)
      : std::invalid_argument("poolkit: " + argument + ": " + rule), kind_(kind), argument_(std::move(argument)) {}
  ErrorKind kind() const noexcept { return kind_; }
  const std::string& argument() const noexcept { return argument_; }

 private:
  ErrorKind kind_;
  std::string argument_;
};

[[noreturn]] inline void fail(std::string argument, const std::string& rule, ErrorKind kind = ErrorKind::Value) {
  throw Error(kind, std::move(argument), rule);
}

}  // namespace poolkit
