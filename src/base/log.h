// Leveled logging to stderr. Quiet by default for library users; the CLI raises it.
#pragma once

namespace tern {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace tern

#define TERN_LOG_WARNING(...) ::tern::Log(::tern::LogLevel::kWarning, __VA_ARGS__)
#define TERN_LOG_INFO(...) ::tern::Log(::tern::LogLevel::kInfo, __VA_ARGS__)
#define TERN_LOG_DEBUG(...) ::tern::Log(::tern::LogLevel::kDebug, __VA_ARGS__)
