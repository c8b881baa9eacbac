// ManagerState: the RPC-service calls of lite.v1.ClusterManager. Each checks
// its caller is a live member (membership) and hands the rest to the
// services part, ServiceRegistry (service_registry.h), under the one lock.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

absl::StatusOr<lite::v1::RegisterServiceResponse> ManagerState::RegisterService(
    const lite::v1::RegisterServiceRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ServiceRegistry::ValidateRegister(request));
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  LITE_ASSIGN_OR_RETURN(lite::v1::Service service,
                        services_.Register(caller->member, request));
  lite::v1::RegisterServiceResponse response;
  *response.mutable_service() = std::move(service);
  return response;
}

absl::StatusOr<lite::v1::UnregisterServiceResponse>
ManagerState::UnregisterService(
    const lite::v1::UnregisterServiceRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  if (request.service_id() == 0) {
    return absl::InvalidArgumentError(
        "service_id is 0; pass the id RegisterService returned");
  }
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  LITE_RETURN_IF_ERROR(
      services_.Unregister(caller->member, request.service_id()));
  return lite::v1::UnregisterServiceResponse();
}

absl::StatusOr<lite::v1::OpenServiceResponse> ManagerState::OpenService(
    const lite::v1::OpenServiceRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("requester", request.requester()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckCallerLocked(request.caller()).status());
  LITE_ASSIGN_OR_RETURN(lite::v1::Service service,
                        services_.Open(request.caller().node_id(),
                                       request.name(), request.requester()));
  lite::v1::OpenServiceResponse response;
  *response.mutable_service() = std::move(service);
  return response;
}

absl::StatusOr<lite::v1::ListServicesResponse> ManagerState::ListServices(
    const lite::v1::ListServicesRequest& request) const {
  LITE_ASSIGN_OR_RETURN(const Page page,
                        ParsePage(request.page_size(), request.page_token()));
  absl::MutexLock lock(&mu_);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  lite::v1::ListServicesResponse response;
  bool more = false;
  for (lite::v1::Service& service :
       services_.List(request.node_id(), page.after_id, page.size, &more)) {
    *response.add_services() = std::move(service);
  }
  response.set_revision(store_->LastEventSequence());
  if (more) {
    response.set_next_page_token(PageToken(
        response.services(response.services_size() - 1).service_id()));
  }
  return response;
}

absl::Status ManagerState::BindService(
    const lite::v1::BindServiceRequest& request, BindDone done) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ServiceRegistry::ValidateBind(request));
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  const lite::v1::Service* service = services_.Find(request.service_id());
  if (service == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no service ", IdHex(request.service_id()),
                     " (unregistered, or ended with its node); open it again"));
  }
  auto server = live_.find(service->node_id());
  if (server == live_.end() || !server->second.session_open) {
    return absl::UnavailableError(
        absl::StrCat("node ", service->node_id(), " serving '", service->name(),
                     "' has no open session; retry shortly"));
  }
  LITE_RETURN_IF_ERROR(CheckNotSuspectLocked(
      server->second,
      absl::StrCat("a ring of service '", service->name(), "'")));
  return services_.Bind(caller->member, server->second.member, *service,
                        request, recovering_, std::move(done));
}

}  // namespace lite::controlplane
