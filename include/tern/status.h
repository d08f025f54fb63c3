// Status and Result<T>: how tern reports anything a user, a file or a request can cause.
//
// A Status is either OK or an error code plus a message that names the thing at fault
// ("model.gguf: tensor 'blk.3.attn_q.weight' at offset 1234: expected I2_S, got F16").
// Result<T> holds a T or a non-OK Status. Neither throws; `src/` never throws or exits.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <variant>

namespace tern {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,    // a bad option or argument value
  kNotFound,           // a file, tensor or key that is not there
  kIo,                 // the OS refused a read, write, open or map
  kFormat,             // a file is malformed (truncated, inconsistent, hostile)
  kUnsupported,        // well-formed but not something tern runs (unknown type, ISA)
  kResourceExhausted,  // over a configured limit (audio length, context, memory)
  kCancelled,
  kInternal,
};

const char* ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "format error: model.gguf: ..." ; "ok" for OK.
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (adds the outer context, e.g. a path).
  Status WithPrefix(const std::string& prefix) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// printf-style message formatting for the helpers below.
std::string StrFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#define TERN_DEFINE_ERROR_HELPER(Name, Code)                   \
  template <typename... Args>                                  \
  Status Name(const char* fmt, Args... args) {                 \
    if constexpr (sizeof...(Args) == 0)                        \
      return Status(ErrorCode::Code, fmt);                     \
    else                                                       \
      return Status(ErrorCode::Code, StrFormat(fmt, args...)); \
  }
TERN_DEFINE_ERROR_HELPER(InvalidArgumentError, kInvalidArgument)
TERN_DEFINE_ERROR_HELPER(NotFoundError, kNotFound)
TERN_DEFINE_ERROR_HELPER(IoError, kIo)
TERN_DEFINE_ERROR_HELPER(FormatError, kFormat)
TERN_DEFINE_ERROR_HELPER(UnsupportedError, kUnsupported)
TERN_DEFINE_ERROR_HELPER(ResourceExhaustedError, kResourceExhausted)
TERN_DEFINE_ERROR_HELPER(CancelledError, kCancelled)
TERN_DEFINE_ERROR_HELPER(InternalError, kInternal)
#undef TERN_DEFINE_ERROR_HELPER

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tern

#define TERN_CONCAT_INNER(a, b) a##b
#define TERN_CONCAT(a, b) TERN_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define TERN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::tern::Status tern_status_ = (expr);        \
    if (!tern_status_.ok()) return tern_status_; \
  } while (0)

// TERN_ASSIGN_OR_RETURN(auto x, MakeX()); declares/assigns x or returns the error.
#define TERN_ASSIGN_OR_RETURN(lhs, expr) \
  TERN_ASSIGN_OR_RETURN_IMPL(TERN_CONCAT(tern_result_, __LINE__), lhs, expr)
#define TERN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
