// TensorRT's ILogger and IProgressMonitor, forwarding to plain callbacks. TensorRT calls them
// from its own threads and they are noexcept: the callbacks must be thread-safe and must not
// throw (bindings.cc hands them to a napi_threadsafe_function; nothing here touches JS).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "trt_headers.h"

namespace trtn::trt {

struct BuildEvents {
  // severity: ILogger::Severity (0 internal error … 4 verbose).
  std::function<void(int severity, const std::string& message)> log;
  // kind: 0 phase start (step = nbSteps), 1 step complete, 2 phase finish.
  std::function<void(int kind, const std::string& phase, const std::string& parent, int step)> progress;
  // Set from JS to stop a build; answered from stepComplete.
  std::atomic<bool> cancel{false};
};

class Logger final : public nvinfer1::ILogger {
 public:
  explicit Logger(BuildEvents* events) : events_(events) {}

  void log(Severity severity, nvinfer1::AsciiChar const* msg) noexcept override {
    try {
      const std::string text = msg == nullptr ? "" : msg;
      if (severity <= Severity::kERROR) {
        std::lock_guard<std::mutex> lock(mutex_);
        lastError_ = text;
      }
      if (events_ != nullptr && events_->log) events_->log(static_cast<int>(severity), text);
    } catch (...) {
      // noexcept interface: a failed forward loses one log line, never the process.
    }
  }

  // The last error TensorRT logged, for the typed error of a failed call.
  std::string LastError() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lastError_;
  }

 private:
  BuildEvents* events_;
  mutable std::mutex mutex_;
  std::string lastError_;
};

class ProgressMonitor final : public nvinfer1::IProgressMonitor {
 public:
  explicit ProgressMonitor(BuildEvents* events) : events_(events) {}

  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
    Forward(0, phaseName, parentPhase, nbSteps);
  }
  bool stepComplete(char const* phaseName, int32_t step) noexcept override {
    Forward(1, phaseName, nullptr, step);
    return !events_->cancel.load();
  }
  void phaseFinish(char const* phaseName) noexcept override { Forward(2, phaseName, nullptr, 0); }

 private:
  void Forward(int kind, char const* phase, char const* parent, int step) noexcept {
    try {
      if (events_->progress) events_->progress(kind, phase == nullptr ? "" : phase, parent == nullptr ? "" : parent, step);
    } catch (...) {
    }
  }
  BuildEvents* events_;
};

}  // namespace trtn::trt
