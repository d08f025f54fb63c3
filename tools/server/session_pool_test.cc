#include "session_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tern::server {
namespace {

std::shared_ptr<const Model> Tiny() {
  ModelOptions o;
  o.model_dir = std::string(TERN_SOURCE_DIR) + "/models/tiny-en";
  Result<std::shared_ptr<const Model>> m = Model::Load(o);
  return m.ok() ? *m : nullptr;
}

// One session, one place on the wait list: the second request waits, the third is refused
// at once with a message that says why, and the waiter gets the session when it is freed.
TEST(SessionPool, WaitsThenRefuses) {
  auto model = Tiny();
  ASSERT_TRUE(model);
  SessionPool pool(model, 1, 1, 1);
  Result<SessionPool::Lease> first = pool.Acquire();
  ASSERT_TRUE(first.ok());
  Session* held = &**first;
  Session* got = nullptr;
  std::thread waiter([&] {
    Result<SessionPool::Lease> l = pool.Acquire();
    if (l.ok()) got = &**l;
  });
  while (pool.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Result<SessionPool::Lease> third = pool.Acquire();
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("1 transcriptions running and 1 waiting"),
            std::string::npos)
      << third.status().message();
  { Result<SessionPool::Lease> release = std::move(first); }  // lease ends: session back
  waiter.join();
  EXPECT_EQ(got, held);
  EXPECT_EQ(pool.waiting(), 0);
  EXPECT_TRUE(pool.Acquire().ok());  // and free again after the waiter's lease ended
}

// Leases of a pool of three are three different sessions.
TEST(SessionPool, SessionsAreDistinct) {
  auto model = Tiny();
  ASSERT_TRUE(model);
  SessionPool pool(model, 3, 1, 0);
  Result<SessionPool::Lease> a = pool.Acquire(), b = pool.Acquire(), c = pool.Acquire();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_NE(&**a, &**b);
  EXPECT_NE(&**b, &**c);
  EXPECT_NE(&**a, &**c);
  EXPECT_FALSE(pool.Acquire().ok());  // no wait list: refused while all three are out
}

}  // namespace
}  // namespace tern::server
