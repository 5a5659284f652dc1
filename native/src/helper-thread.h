// Long-lived helper threads for the chart (chart.cc): one runs a chart's
// batch of blocks while JavaScript fetches the next, one takes half of a
// batch. Long-lived because a new thread starts with empty thread-local
// decode scratch, and filling it again cost more than the split saved. One
// job at a time each: a caller that finds one busy (another request's chart)
// does that work on its own thread instead, so nothing ever waits for a
// helper it did not start.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>

namespace meridian {

class Helper {
 public:
  enum Role { kBatch = 0, kHalf = 1 };
  /** The helper of a role; its thread starts on first use and runs until the process ends. */
  static Helper& Get(Role role);

  /** Starts job on the helper; false (nothing started) when it is busy. The job must not throw. */
  bool TryStart(std::function<void()> job);
  /** Waits until the helper is free (the job TryStart started is done). */
  void Wait();

  Helper();

 private:
  void Run();

  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false;
};

}  // namespace meridian
