// GET /v1/realtime?intent=transcription: the WebSocket carrying the realtime protocol
// (realtime.h). The HTTP layer hands over the connection and the upgrade request; from then on
// each text message is a client event and each server event a text message. Bounded: one
// message (--realtime-max-message-mb: larger closes the connection with 1009 "message too
// big"), the audio in one append and the audio waiting (error events), the time without a
// client message (--realtime-idle-timeout: an error event, then close), the server events
// waiting for a slow reader (--realtime-max-pending-mb: beyond, closed), and the connections
// at once (--realtime-sessions: beyond, 503 before the upgrade). At SIGTERM/SIGINT every open
// session gets an error event (code "server_shutting_down") and the close handshake with
// 1001 (going away); what has not closed by the end of the grace is cut off.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "realtime.h"
#include "tern/tern.h"

namespace tern::server {

class RealtimeWs;

struct RealtimeContext {
  std::shared_ptr<const Model> model;
  std::string model_name;
  TranscribeOptions defaults;
  RealtimeLimits limits;
  size_t max_message_bytes = 4 << 20;
  // Server events waiting for a client that does not read them (the one being written
  // included); beyond, the connection closes.
  size_t max_pending_bytes = 4 << 20;
  double idle_timeout_s = 60;
  int max_sessions = 4;
  std::atomic<int> sessions{0};  // from the upgrade request until the connection is gone

  // The open sessions, for the shutdown.
  std::mutex mu;
  uint64_t next_id = 0;
  std::map<uint64_t, std::weak_ptr<RealtimeWs>> open;
};

// A browser cannot set Authorization on a WebSocket, so OpenAI's browser clients send the key
// among the offered subprotocols instead: "Sec-WebSocket-Protocol: realtime,
// openai-insecure-api-key.KEY". This returns the Authorization value that stands for
// ("Bearer KEY"), or "" when no such subprotocol is offered.
std::string AuthorizationFromSubprotocols(std::string_view offered);
// Whether `name` is among the offered subprotocols (a comma-separated list).
bool OffersSubprotocol(std::string_view offered, std::string_view name);

// Takes over `socket`, whose request `req` asked for the upgrade (a client sends nothing more
// before the handshake's answer): answers the handshake, or 503 when max_sessions are open.
// `ctx` must outlive the connection.
void StartRealtime(boost::asio::ip::tcp::socket socket,
                   const boost::beast::http::request<boost::beast::http::string_body>& req,
                   RealtimeContext& ctx);

// SIGTERM: every open session gets the error event and a close with 1001 (a session still in
// its handshake is closed). Returns at once; the sessions close on their own threads.
void ShutdownRealtime(RealtimeContext& ctx);
// The grace is over: close the sockets of the sessions still open (a client that does not
// answer the close handshake).
void AbortRealtime(RealtimeContext& ctx);

}  // namespace tern::server
