#include "agent/context_registry.h"

namespace lite::agent {

void ContextRegistry::CancelAll() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  for (grpc::ClientContext* ctx : active_) ctx->TryCancel();
}

ContextRegistry::Scoped::Scoped(ContextRegistry* registry,
                                grpc::ClientContext* ctx)
    : registry_(registry), ctx_(ctx) {
  absl::MutexLock lock(&registry_->mu_);
  registry_->active_.insert(ctx_);
  if (registry_->cancelled_) ctx_->TryCancel();
}

ContextRegistry::Scoped::~Scoped() {
  absl::MutexLock lock(&registry_->mu_);
  registry_->active_.erase(ctx_);
}

}  // namespace lite::agent
