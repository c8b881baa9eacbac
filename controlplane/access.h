// Unix-style access checks for LMRs: the owner class if the requester's uid
// is the owner's, else the group class if its gid or one of its
// supplementary groups is the owner's group, else other; only the read (4)
// and write (2) bits count. No root override: the mode is the whole policy.
#ifndef LITE_CONTROLPLANE_ACCESS_H_
#define LITE_CONTROLPLANE_ACCESS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "lite/v1/types.pb.h"

namespace lite::controlplane {

// OK if `mode` lets `requester` have `access` to an LMR owned by
// owner_uid/owner_gid; otherwise PERMISSION_DENIED saying which class applied
// and what it allows. A requester that is neither the owner nor, as far as
// its groups tell, in the owner's group, and whose groups were truncated
// (Credentials.groups_truncated), is refused (PERMISSION_DENIED) whatever
// "other" allows: the group class might have applied and allowed less.
// `requester` must have passed ValidateCredentials (validation.h), which
// bounds its groups. `what` names the object in the message ("LMR 'x'").
absl::Status CheckAccess(const std::string& what, uint32_t mode,
                         uint32_t owner_uid, uint32_t owner_gid,
                         const lite::v1::Credentials& requester,
                         const lite::v1::Access& access);

// The same rules for an RPC service's execute bit (1): OK if `mode` lets
// `requester` call the service; PERMISSION_DENIED otherwise.
absl::Status CheckExecuteAccess(const std::string& what, uint32_t mode,
                                uint32_t owner_uid, uint32_t owner_gid,
                                const lite::v1::Credentials& requester);

// "rw-r-----" for 0640 (LMR modes have no x bit).
std::string ModeString(uint32_t mode);

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_ACCESS_H_
