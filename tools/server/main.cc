// tern-server: the engine behind an OpenAI-compatible HTTP API (routes.h lists the routes,
// bounds.h the bounds, docs/server.md both).
//   tern-server --model DIR [--host 127.0.0.1] [--port 8080] [--max-batch 16] [-t N]
// One Model is loaded and shared; --sessions BatchSessions (each -t threads) of --max-batch
// lanes transcribe that many requests at once, those of a BatchSession decoding together
// (one batched decoder step for all), --max-waiting more requests wait for a lane, and any
// further request gets 503 at once.
// Prints "tern-server: listening on http://HOST:PORT" on stdout when ready (--port 0 picks
// a free port); SIGINT/SIGTERM stop it within --shutdown-grace + 1 s, exit status 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "access_log.h"
#include "http_session.h"
#include "bounds.h"
#include "listener.h"
#include "session_pool.h"
#include "tern/tern.h"

namespace tern::server {

Status Limits::Validate() const {
  if (max_header_bytes < 1024 || max_header_bytes > (1u << 20))
    return InvalidArgumentError("--max-header-bytes must be in [1024, 1048576], got %zu",
                                max_header_bytes);
  if (!(max_upload_mb > 0 && max_upload_mb <= 4096))
    return InvalidArgumentError("--max-upload-mb must be in (0, 4096], got %g", max_upload_mb);
  if (!(max_uploads_mb >= max_upload_mb && max_uploads_mb <= 1024 * 1024))
    return InvalidArgumentError("--max-uploads-mb must be in [--max-upload-mb, 1048576], got %g",
                                max_uploads_mb);
  if (!(read_timeout_s > 0 && read_timeout_s <= 3600))
    return InvalidArgumentError("--read-timeout must be in (0, 3600] seconds, got %g",
                                read_timeout_s);
  if (!(idle_timeout_s > 0 && idle_timeout_s <= 3600))
    return InvalidArgumentError("--idle-timeout must be in (0, 3600] seconds, got %g",
                                idle_timeout_s);
  if (!(write_timeout_s > 0 && write_timeout_s <= 3600))
    return InvalidArgumentError("--write-timeout must be in (0, 3600] seconds, got %g",
                                write_timeout_s);
  if (max_connections < 1 || max_connections > 100000)
    return InvalidArgumentError("--max-connections must be in [1, 100000], got %d",
                                max_connections);
  if (!(shutdown_grace_s >= 0 && shutdown_grace_s <= 3600))
    return InvalidArgumentError("--shutdown-grace must be in [0, 3600] seconds, got %g",
                                shutdown_grace_s);
  if (io_threads < 1 || io_threads > 64)
    return InvalidArgumentError("--io-threads must be in [1, 64], got %d", io_threads);
  return Status::Ok();
}

}  // namespace tern::server

namespace {

struct Flags {
  tern::ModelOptions model;
  std::string head = "f16";
  std::string host = "127.0.0.1";
  int port = 8080;
  int sessions = 1;
  int max_batch = 16;
  int threads = 0;
  int max_waiting = 8;
  bool quiet = false;
  std::string cors_origin;
  tern::server::Limits limits;
  tern::server::ServerConfig config;
  int realtime_sessions = 2;
  int realtime_threads = 0;
  double realtime_idle_timeout_s = 60;
  double realtime_max_message_mb = 4;
  double realtime_max_buffered_s = 30;
  double realtime_max_pending_mb = 4;
};

tern::Status Serve(Flags& f) {
  using tern::InvalidArgumentError;
  TERN_ASSIGN_OR_RETURN(f.model.head, tern::HeadPrecisionFromName(f.head));
  if (f.port < 0 || f.port > 65535)
    return InvalidArgumentError("--port must be in [0, 65535], got %d", f.port);
  if (f.sessions < 1 || f.sessions > 64)
    return InvalidArgumentError("--sessions must be in [1, 64], got %d", f.sessions);
  if (f.max_batch < 1 || f.max_batch > 256)
    return InvalidArgumentError("--max-batch must be in [1, 256], got %d", f.max_batch);
  if (f.threads < 0 || f.threads > 1024)
    return InvalidArgumentError("--threads must be in [0, 1024], got %d", f.threads);
  if (f.max_waiting < 0 || f.max_waiting > 10000)
    return InvalidArgumentError("--max-waiting must be in [0, 10000], got %d", f.max_waiting);
  if (f.cors_origin.find_first_of("\r\n") != std::string::npos)
    return InvalidArgumentError("--cors-origin must be one line");
  TERN_RETURN_IF_ERROR(f.limits.Validate());
  TERN_RETURN_IF_ERROR(f.model.Validate());
  TERN_RETURN_IF_ERROR(f.config.audio.Validate());
  TERN_RETURN_IF_ERROR(f.config.defaults.Validate());
  if (f.realtime_sessions < 0 || f.realtime_sessions > 256)
    return InvalidArgumentError("--realtime-sessions must be in [0, 256], got %d",
                                f.realtime_sessions);
  if (f.realtime_threads < 0 || f.realtime_threads > 1024)
    return InvalidArgumentError("--realtime-threads must be in [0, 1024], got %d",
                                f.realtime_threads);
  if (!(f.realtime_idle_timeout_s >= 0.1 && f.realtime_idle_timeout_s <= 86400))
    return InvalidArgumentError("--realtime-idle-timeout must be in [0.1, 86400] s, got %g",
                                f.realtime_idle_timeout_s);
  if (!(f.realtime_max_message_mb >= 0.01 && f.realtime_max_message_mb <= 256))
    return InvalidArgumentError("--realtime-max-message-mb must be in [0.01, 256], got %g",
                                f.realtime_max_message_mb);
  if (!(f.realtime_max_pending_mb >= 0.01 && f.realtime_max_pending_mb <= 1024))
    return InvalidArgumentError("--realtime-max-pending-mb must be in [0.01, 1024], got %g",
                                f.realtime_max_pending_mb);
  if (!(f.realtime_max_buffered_s >= 1 && f.realtime_max_buffered_s <= 3600))
    return InvalidArgumentError("--realtime-max-buffered must be in [1, 3600] s, got %g",
                                f.realtime_max_buffered_s);

  TERN_ASSIGN_OR_RETURN(std::shared_ptr<const tern::Model> model, tern::Model::Load(f.model));
  if (f.config.model_name.empty()) f.config.model_name = model->info().name;
  if (f.config.model_name.empty()) f.config.model_name = "vibeasr";
  f.config.private_paths = {model->info().lm_path, model->info().vae_path, f.model.model_dir};
  const tern::TrainedWith& trained = model->info().trained;
  if (trained.max_audio_seconds || trained.chunk_seconds) f.config.chunking_seconds = 0;
  // Default threads: the machine's cores shared among the sessions.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / f.sessions);

  tern::server::AccessLog log(f.quiet);
  tern::server::ServerContext ctx;
  ctx.limits = f.limits;
  ctx.config = f.config;
  ctx.cors_origin = f.cors_origin;
  ctx.log = &log;
  ctx.uploads = std::make_unique<tern::server::UploadBudget>(f.limits.max_bodies_bytes());
  auto pool = std::make_unique<tern::server::SessionPool>(model, f.sessions, threads, f.max_waiting,
                                                          f.max_batch);
  ctx.pool = pool.get();
  // Realtime sessions each own a Session (one prompt's KV cache and its threads) for as long
  // as they are open: --realtime-sessions bounds them apart from --sessions.
  tern::server::RealtimeContext realtime;
  realtime.model = model;
  realtime.model_name = f.config.model_name;
  realtime.defaults = f.config.defaults;
  // Their own Session holds up no batch: pieces decode with the model's declared beam, as
  // `tern transcribe --live` does.
  realtime.defaults.decoding.beam = 0;
  realtime.limits.threads = f.realtime_threads > 0 ? f.realtime_threads : threads;
  realtime.limits.max_buffered_seconds = f.realtime_max_buffered_s;
  realtime.limits.max_append_bytes =
      std::min<size_t>(realtime.limits.max_append_bytes,
                       static_cast<size_t>(f.realtime_max_message_mb * 1024 * 1024));
  realtime.max_message_bytes = static_cast<size_t>(f.realtime_max_message_mb * 1024 * 1024);
  realtime.max_pending_bytes = static_cast<size_t>(f.realtime_max_pending_mb * 1024 * 1024);
  realtime.idle_timeout_s = f.realtime_idle_timeout_s;
  realtime.max_sessions = f.realtime_sessions;
  ctx.realtime = &realtime;
  auto listener = std::make_unique<tern::server::Listener>(ctx);
  int port = 0;
  TERN_RETURN_IF_ERROR(listener->Bind(f.host, f.port, &port));
  std::printf("tern-server: listening on http://%s:%d (%s, %d session%s x %d threads, %s)\n",
              f.host.c_str(), port, f.config.model_name.c_str(), f.sessions,
              f.sessions == 1 ? "" : "s", threads, model->info().isa.c_str());
  std::fflush(stdout);
  log.CaptureStderr();  // from here on, stderr lines reach the terminal only through the log
  listener->Run();
  // Cancelled work ends at its next token; work that does not (a long encoder pass) is not
  // waited for: the process exits within the second after the grace, as promised.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
  while ((pool->running() > 0 || pool->waiting() > 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (pool->running() > 0 || pool->waiting() > 0) {
    log.Note("server", "exiting with cancelled work still winding down");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  listener.reset();  // connections first: their jobs' closures refer to them
  pool.reset();
  log.Note("server", "stopped");
  return tern::Status::Ok();
}

}  // namespace

int Main(int argc, char** argv) {
  Flags f;
  // Requests decode greedily unless they ask for a beam ("beam"; 0: the model's declared
  // width): a beam search decodes alone, outside the shared batch of the others.
  f.config.defaults.decoding.beam = 1;
  bool version = false;
  CLI::App app{"tern-server: speech recognition over an OpenAI-compatible HTTP API"};
  app.add_flag("--version", version, "print the version and exit");
  app.add_option("--model", f.model.model_dir, "directory with the two VibeASR GGUF files");
  app.add_option("--vae", f.model.vae_path, "encoder GGUF (overrides the one in --model)");
  app.add_option("--lm", f.model.lm_path, "decoder GGUF (overrides the one in --model)");
  app.add_option("--head", f.head, "output head precision: f16 or int8")->capture_default_str();
  app.add_option("--host", f.host, "address to listen on")->capture_default_str();
  app.add_option("--port", f.port, "port (0: any free one)")->capture_default_str();
  app.add_option("--max-batch", f.max_batch,
                 "transcriptions at once per session, decoded together (1: one at a time)")
      ->capture_default_str();
  app.add_option("--sessions", f.sessions,
                 "independent sessions, each with its own threads and --max-batch lanes")
      ->capture_default_str();
  app.add_option("-t,--threads", f.threads, "threads per session (default: cores / sessions)");
  app.add_option("--max-waiting", f.max_waiting,
                 "requests that may wait for a lane when all are busy")
      ->capture_default_str();
  app.add_option("--max-upload-mb", f.limits.max_upload_mb, "largest request body")
      ->capture_default_str();
  app.add_option("--max-uploads-mb", f.limits.max_uploads_mb,
                 "request bodies held at once, all connections (beyond: 503)")
      ->capture_default_str();
  app.add_option("--max-header-bytes", f.limits.max_header_bytes, "largest request line + headers")
      ->capture_default_str();
  app.add_option("--read-timeout", f.limits.read_timeout_s,
                 "seconds for a whole request to arrive, from its first byte")
      ->capture_default_str();
  app.add_option("--idle-timeout", f.limits.idle_timeout_s,
                 "seconds a connection may wait for its next request")
      ->capture_default_str();
  app.add_option("--write-timeout", f.limits.write_timeout_s,
                 "seconds for each response write to complete")
      ->capture_default_str();
  app.add_option("--max-connections", f.limits.max_connections, "connections open at once")
      ->capture_default_str();
  app.add_option("--shutdown-grace", f.limits.shutdown_grace_s,
                 "seconds in-flight requests may finish after SIGTERM")
      ->capture_default_str();
  app.add_option("--io-threads", f.limits.io_threads, "threads reading and writing connections")
      ->capture_default_str();
  app.add_option("--realtime-sessions", f.realtime_sessions,
                 "realtime (WebSocket) transcriptions open at once, each with its own session")
      ->capture_default_str();
  app.add_option("--realtime-threads", f.realtime_threads,
                 "threads per realtime session (default: as --threads)");
  app.add_option("--realtime-idle-timeout", f.realtime_idle_timeout_s,
                 "close a realtime session after this many seconds without a client event")
      ->capture_default_str();
  app.add_option("--realtime-max-message-mb", f.realtime_max_message_mb,
                 "largest WebSocket message (larger: closed with 1009)")
      ->capture_default_str();
  app.add_option("--realtime-max-pending-mb", f.realtime_max_pending_mb,
                 "server events waiting for a client that does not read them (beyond: closed)")
      ->capture_default_str();
  app.add_option("--realtime-max-buffered", f.realtime_max_buffered_s,
                 "seconds of appended audio that may wait to be transcribed (beyond: error events)")
      ->capture_default_str();
  app.add_option("--cors-origin", f.cors_origin, "allow browser requests from ORIGIN (or *)");
  app.add_flag("--quiet", f.quiet, "no access log");
  app.add_option("--max-audio-seconds", f.config.audio.max_seconds, "refuse longer audio")
      ->capture_default_str();
  app.add_option("--max-tokens", f.config.defaults.decoding.max_tokens,
                 "default generated-token limit")
      ->capture_default_str();
  app.add_option("--model-name", f.config.model_name,
                 "the id /v1/models lists (default: the file's name)");
  app.add_option("--api-key", f.config.api_key, "require this bearer token on /v1/ routes");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (version) {
    std::printf("tern-server: %s\n", tern::VersionString().c_str());
    return 0;
  }
  try {
    const tern::Status s = Serve(f);
    if (!s.ok()) {
      std::fprintf(stderr, "tern-server: %s\n", s.ToString().c_str());
      return s.code() == tern::ErrorCode::kInvalidArgument ? 2 : 1;
    }
  } catch (const std::exception& e) {  // third-party exceptions stop here, at the tool edge
    std::fprintf(stderr, "tern-server: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Nothing escapes main: an exception from option setup or from the standard library (out of
// memory) becomes a message and exit 1, like every other failure.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tern-server: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "tern-server: unknown error\n");
  }
  return 1;
}
