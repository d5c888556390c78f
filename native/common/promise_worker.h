// A thread-pool job that settles a Promise: Run() on a worker thread, Result() or a typed error
// on the JS thread. Shared by addon.cc and the GPU bindings.
#pragma once

#include <napi.h>

#include "native_error.h"

namespace trtn {

// The library's own JS error (lib/errors.ts) for a native error (defined in addon.cc).
Napi::Value MakeJsError(Napi::Env env, const NativeError& error);

// Throws MakeJsError(error) as a JS exception (JS thread only).
[[noreturn]] inline void ThrowJsError(Napi::Env env, const NativeError& error) {
  throw Napi::Error(env, MakeJsError(env, error));
}

class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, const char* name)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise Start() {
    Napi::Promise promise = deferred_.Promise();
    Queue();
    return promise;
  }

 protected:
  virtual bool Run(NativeError* error) = 0;
  virtual Napi::Value Result(Napi::Env env) = 0;
  // JS thread, before the Promise settles either way (releases what the job held).
  virtual void Finally(Napi::Env) {}
  // In Finally: whether Run failed (the Promise is about to be rejected).
  bool failed() const { return failed_; }

 private:
  void Execute() override {
    if (!Run(&error_)) SetError(error_.message);
  }
  void OnOK() override {
    Finally(Env());
    deferred_.Resolve(Result(Env()));
  }
  void OnError(const Napi::Error&) override {
    failed_ = true;
    Finally(Env());
    deferred_.Reject(MakeJsError(Env(), error_));
  }

  Napi::Promise::Deferred deferred_;
  NativeError error_;
  bool failed_ = false;
};

}  // namespace trtn
