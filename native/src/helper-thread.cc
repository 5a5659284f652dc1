#include "helper-thread.h"

#include <thread>
#include <utility>

namespace meridian {

Helper& Helper::Get(Role role) {
  static auto* helpers = new Helper[2];  // never destroyed: the threads run until the process ends
  return helpers[role];
}

Helper::Helper() {
  std::thread([this] { Run(); }).detach();
}

bool Helper::TryStart(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(m_);
  if (busy_) return false;
  busy_ = true;
  job_ = std::move(job);
  cv_.notify_all();
  return true;
}

void Helper::Wait() {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return !busy_; });
}

void Helper::Run() {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    cv_.wait(lock, [&] { return job_ != nullptr; });
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    job();
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace meridian
