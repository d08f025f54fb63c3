// BatchSession: max_batch lanes (each a Session::Impl with its own KV cache) over one
// Compute and one StepBatcher. A call takes a free lane for its whole transcription, so the
// lane's cached prompt head serves the calls that follow on it as in a Session.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/session_impl.h"
#include "engine/stepper.h"

namespace tern {

struct BatchSession::Impl {
  std::shared_ptr<const Model> model;
  std::shared_ptr<engine::Compute> compute;
  engine::StepBatcher batcher;
  std::vector<std::unique_ptr<Session::Impl>> lanes;
  std::vector<Session::Impl*> free;  // lanes not in use
  std::mutex mu;
  std::condition_variable cv;

  Impl(std::shared_ptr<const Model> m, int threads, int max_batch)
      : model(std::move(m)),
        compute(std::make_shared<engine::Compute>(threads)),
        batcher(*model->impl().decoder, *compute, max_batch) {
    for (int i = 0; i < max_batch; ++i)
      lanes.push_back(std::make_unique<Session::Impl>(model, compute, &batcher));
    for (auto it = lanes.rbegin(); it != lanes.rend(); ++it) free.push_back(it->get());
  }

  Session::Impl* TakeLane() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !free.empty(); });
    Session::Impl* lane = free.back();
    free.pop_back();
    return lane;
  }
  void GiveBack(Session::Impl* lane) {
    {
      std::lock_guard<std::mutex> lock(mu);
      free.push_back(lane);
    }
    cv.notify_one();
  }
};

BatchSession::BatchSession(std::shared_ptr<const Model> model, int threads, int max_batch)
    : impl_(std::make_unique<Impl>(std::move(model), engine::ThreadsOrCpus(threads),
                                   std::clamp(max_batch, 1, 256))) {}
BatchSession::~BatchSession() = default;

Result<Transcript> BatchSession::Transcribe(const Audio& audio, const TranscribeOptions& options) {
  Session::Impl* lane = impl_->TakeLane();
  Result<Transcript> t = lane->Transcribe(audio, options);
  impl_->GiveBack(lane);
  return t;
}

int BatchSession::threads() const { return impl_->compute->pool.size(); }
int BatchSession::max_batch() const { return static_cast<int>(impl_->lanes.size()); }

BatchSession::Stats BatchSession::stats() const {
  return Stats{impl_->batcher.steps(), impl_->batcher.rows()};
}

}  // namespace tern
