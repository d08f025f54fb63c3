#include "session_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

namespace tern::server {
namespace {

std::shared_ptr<const Model> Tiny() {
  ModelOptions o;
  o.model_dir = std::string(TERN_SOURCE_DIR) + "/models/tiny-en";
  Result<std::shared_ptr<const Model>> m = Model::Load(o);
  return m.ok() ? *m : nullptr;
}

void WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 5000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// One session, one place on the wait list: the second job waits, the third is refused at
// once with a message that says why, and the waiter runs once the first is done.
TEST(SessionPool, WaitsThenRefuses) {
  auto model = Tiny();
  ASSERT_TRUE(model);
  SessionPool pool(model, 1, 1, 1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<BatchSession*> first{nullptr}, second{nullptr};
  ASSERT_TRUE(pool.Submit([&](BatchSession& s) {
                    first = &s;
                    released.wait();
                  })
                  .ok());
  WaitFor([&] { return pool.running() == 1; });
  ASSERT_EQ(pool.running(), 1);
  ASSERT_TRUE(pool.Submit([&](BatchSession& s) { second = &s; }).ok());
  EXPECT_EQ(pool.waiting(), 1);
  const Status third = pool.Submit([](BatchSession&) {});
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(third.message().find("1 transcriptions running and 1 waiting"), std::string::npos)
      << third.message();
  EXPECT_EQ(second.load(), nullptr);  // still waiting behind the first
  release.set_value();
  WaitFor([&] { return second.load() != nullptr && pool.running() == 0; });
  EXPECT_EQ(second.load(), first.load());
  EXPECT_EQ(pool.waiting(), 0);
  EXPECT_TRUE(pool.Submit([](BatchSession&) {}).ok());  // free again
}

// Three jobs at once on a pool of three run on three different sessions.
TEST(SessionPool, SessionsAreDistinct) {
  auto model = Tiny();
  ASSERT_TRUE(model);
  SessionPool pool(model, 3, 1, 0);
  std::mutex mu;
  std::set<BatchSession*> seen;
  std::atomic<int> arrived{0};
  std::atomic<bool> release{false};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pool.Submit([&](BatchSession& s) {
                      {
                        std::lock_guard<std::mutex> l(mu);
                        seen.insert(&s);
                      }
                      ++arrived;
                      while (arrived < 3 || !release)
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    })
                    .ok());
  }
  EXPECT_FALSE(pool.Submit([](BatchSession&) {}).ok());  // no wait list: refused while all run
  release = true;
  WaitFor([&] { return arrived == 3 && pool.running() == 0; });
  EXPECT_EQ(seen.size(), 3u);
}

// One BatchSession of three lanes: three jobs at once, all on it (their decoding batched).
TEST(SessionPool, LanesShareTheirBatchSession) {
  auto model = Tiny();
  ASSERT_TRUE(model);
  SessionPool pool(model, 1, 1, 0, 3);
  EXPECT_EQ(pool.size(), 3);
  std::mutex mu;
  std::set<BatchSession*> seen;
  std::atomic<int> arrived{0};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pool.Submit([&](BatchSession& s) {
                      {
                        std::lock_guard<std::mutex> l(mu);
                        seen.insert(&s);
                      }
                      ++arrived;
                      while (arrived < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    })
                    .ok());
  }
  WaitFor([&] { return arrived == 3 && pool.running() == 0; });
  EXPECT_EQ(arrived.load(), 3);  // all three ran at once: each waited for the others
  EXPECT_EQ(seen.size(), 1u);
}

}  // namespace
}  // namespace tern::server
