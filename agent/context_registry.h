// Tracks the gRPC client calls the agent has in flight so that shutdown can
// cancel all of them: every blocking call is then bounded by its deadline AND
// by shutdown.
#ifndef LITE_AGENT_CONTEXT_REGISTRY_H_
#define LITE_AGENT_CONTEXT_REGISTRY_H_

#include <grpcpp/client_context.h>

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace lite::agent {

class ContextRegistry {
 public:
  // Cancels every registered call, and from now on every call registered
  // later, at once.
  void CancelAll();

  // Registers a context for its lifetime.
  class Scoped {
   public:
    Scoped(ContextRegistry* registry, grpc::ClientContext* ctx);
    ~Scoped();
    Scoped(const Scoped&) = delete;
    Scoped& operator=(const Scoped&) = delete;

   private:
    ContextRegistry* const registry_;
    grpc::ClientContext* const ctx_;
  };

 private:
  absl::Mutex mu_;
  std::set<grpc::ClientContext*> active_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_CONTEXT_REGISTRY_H_
