// tern-server: the engine behind an OpenAI-compatible HTTP API (routes.h lists the routes).
//   tern-server --model DIR [--host 127.0.0.1] [--port 8080] [--sessions 1] [-t N]
// One Model is loaded and shared; --sessions Sessions (each -t threads) transcribe at once,
// --max-waiting more requests wait for one, and any further request gets 503 at once.
// Prints "tern-server: listening on http://HOST:PORT" on stdout when ready (--port 0 picks
// a free port); SIGINT/SIGTERM stop it cleanly.
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <httplib.h>

#include "routes.h"
#include "session_pool.h"
#include "tern/tern.h"

namespace {

httplib::Server* g_server = nullptr;

void Stop(int) {
  if (g_server) g_server->stop();
}

struct Flags {
  tern::ModelOptions model;
  std::string head = "f16";
  std::string host = "127.0.0.1";
  int port = 8080;
  int sessions = 1;
  int threads = 0;
  int max_waiting = 8;
  double max_upload_mb = 100;
  tern::server::ServerConfig config;
};

tern::Status Serve(Flags& f) {
  using tern::InvalidArgumentError;
  TERN_ASSIGN_OR_RETURN(f.model.head, tern::HeadPrecisionFromName(f.head));
  if (f.port < 0 || f.port > 65535) return InvalidArgumentError("--port must be in [0, 65535], got %d", f.port);
  if (f.sessions < 1 || f.sessions > 64) return InvalidArgumentError("--sessions must be in [1, 64], got %d", f.sessions);
  if (f.threads < 0 || f.threads > 1024) return InvalidArgumentError("--threads must be in [0, 1024], got %d", f.threads);
  if (f.max_waiting < 0 || f.max_waiting > 10000)
    return InvalidArgumentError("--max-waiting must be in [0, 10000], got %d", f.max_waiting);
  if (!(f.max_upload_mb > 0 && f.max_upload_mb <= 4096))
    return InvalidArgumentError("--max-upload-mb must be in (0, 4096], got %g", f.max_upload_mb);
  TERN_RETURN_IF_ERROR(f.model.Validate());
  TERN_RETURN_IF_ERROR(f.config.audio.Validate());
  TERN_RETURN_IF_ERROR(f.config.defaults.Validate());

  TERN_ASSIGN_OR_RETURN(std::shared_ptr<const tern::Model> model, tern::Model::Load(f.model));
  if (f.config.model_name.empty()) f.config.model_name = model->info().name;
  if (f.config.model_name.empty()) f.config.model_name = "vibeasr";
  // Default threads: the machine's cores shared among the sessions.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = f.threads > 0 ? f.threads : std::max(1, cores / f.sessions);
  tern::server::SessionPool pool(model, f.sessions, threads, f.max_waiting);

  httplib::Server server;
  // Connection threads: the running and waiting requests, plus two to answer 503 and
  // /health while those are all taken.
  const size_t connections = static_cast<size_t>(f.sessions + f.max_waiting + 2);
  server.new_task_queue = [connections] { return new httplib::ThreadPool(connections); };
  server.set_payload_max_length(static_cast<size_t>(f.max_upload_mb * 1024 * 1024));
  tern::server::InstallRoutes(server, f.config, pool);
  const int port = f.port == 0 ? server.bind_to_any_port(f.host)
                               : (server.bind_to_port(f.host, f.port) ? f.port : -1);
  if (port < 0)
    return tern::Status(tern::ErrorCode::kIo,
                        tern::StrFormat("cannot listen on %s:%d", f.host.c_str(), f.port));
  g_server = &server;
  std::signal(SIGINT, Stop);
  std::signal(SIGTERM, Stop);
  std::printf("tern-server: listening on http://%s:%d (%s, %d session%s x %d threads, %s)\n",
              f.host.c_str(), port, f.config.model_name.c_str(), f.sessions,
              f.sessions == 1 ? "" : "s", threads, model->info().isa.c_str());
  std::fflush(stdout);
  server.listen_after_bind();
  g_server = nullptr;
  return tern::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"tern-server: speech recognition over an OpenAI-compatible HTTP API"};
  app.add_option("--model", f.model.model_dir, "directory with the two VibeASR GGUF files");
  app.add_option("--vae", f.model.vae_path, "encoder GGUF (overrides the one in --model)");
  app.add_option("--lm", f.model.lm_path, "decoder GGUF (overrides the one in --model)");
  app.add_option("--head", f.head, "output head precision: f16 or int8")->capture_default_str();
  app.add_option("--host", f.host, "address to listen on")->capture_default_str();
  app.add_option("--port", f.port, "port (0: any free one)")->capture_default_str();
  app.add_option("--sessions", f.sessions, "transcriptions at once")->capture_default_str();
  app.add_option("-t,--threads", f.threads, "threads per session (default: cores / sessions)");
  app.add_option("--max-waiting", f.max_waiting, "requests that may wait for a session")->capture_default_str();
  app.add_option("--max-upload-mb", f.max_upload_mb, "largest request body")->capture_default_str();
  app.add_option("--max-audio-seconds", f.config.audio.max_seconds, "refuse longer audio")->capture_default_str();
  app.add_option("--max-tokens", f.config.defaults.decoding.max_tokens, "default generated-token limit")
      ->capture_default_str();
  app.add_option("--model-name", f.config.model_name, "the id /v1/models lists (default: the file's name)");
  app.add_option("--api-key", f.config.api_key, "require this bearer token on /v1/ routes");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
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
