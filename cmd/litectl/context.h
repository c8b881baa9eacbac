// What every litectl subcommand gets: where to connect, how to print, how
// long to wait, and where to write; plus the helpers they share.
#ifndef LITE_TOOLS_LITECTL_CONTEXT_H_
#define LITE_TOOLS_LITECTL_CONTEXT_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/tls/credentials.h"
#include "google/protobuf/message.h"

namespace lite::litectl {

// Ctrl-C while a command streams: the signal thread fires it, and the
// command (watch) ends its stream and exits 0. Without a hook, Fire()
// returns false and the caller exits the process.
class Interrupt {
 public:
  void SetHook(std::function<void()> hook);
  void ClearHook();
  bool Fire();

 private:
  absl::Mutex mu_;
  std::function<void()> hook_ ABSL_GUARDED_BY(mu_);
};

enum class Output { kTable, kJson };

struct Context {
  // The manager's address (--manager, else $LITE_MANAGER, else the default).
  std::string manager;
  Output output = Output::kTable;
  // Deadline of each unary call.
  absl::Duration timeout = absl::Seconds(5);
  std::ostream* out = nullptr;
  Interrupt* interrupt = nullptr;
  // $LITE_AGENT, for the agent subcommands' default.
  std::string agent_env;
  // Mutual TLS (--tls_cert/--tls_key/--tls_ca, else $LITE_TLS_CERT,
  // $LITE_TLS_KEY, $LITE_TLS_CA), or plaintext with `insecure`
  // (--insecure, $LITE_INSECURE=1).
  tls::TlsFiles tls;
  bool insecure = false;
  // The names the servers' certificates must carry: the manager's
  // (--manager_tls_name, default litemgr) and an agent's, its node name
  // (--agent_tls_name, else $LITE_AGENT_TLS_NAME).
  std::string manager_tls_name = "litemgr";
  std::string agent_tls_name;
  // The credentials every channel uses, made once by MakeCredentials.
  std::shared_ptr<grpc::ChannelCredentials> credentials;

  // Reads and checks the TLS files (or takes plaintext with `insecure`);
  // every Dial needs it first.
  absl::Status MakeCredentials();
  // A channel to `target`: the manager when it is `manager` (its
  // certificate must name manager_tls_name), else an agent (agent_tls_name).
  std::shared_ptr<grpc::Channel> Dial(const std::string& target) const;
  // Sets the call's deadline to now + timeout.
  void Arm(grpc::ClientContext* ctx) const;
};

// A failed call as litectl reports it: the gRPC code and message; for
// "cannot reach" codes the target is named too.
absl::Status CallError(const grpc::Status& status, absl::string_view target);

// Writes the message to ctx.out as JSON with proto field names (64-bit
// integers as strings, the proto3 JSON mapping), pretty (multi-line) or on
// one line.
absl::Status PrintJson(const Context& ctx, const google::protobuf::Message& msg,
                       bool pretty);

// Strips an enum value name's prefix: NODE_STATE_ALIVE -> ALIVE.
std::string EnumSuffix(const std::string& name, absl::string_view prefix);

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_CONTEXT_H_
