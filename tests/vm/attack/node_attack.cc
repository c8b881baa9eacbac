// node_attack: a compromised node's calls to the manager, for
// tests/vm/blast_radius.sh (issue #31, phase B). Root on node1 takes node1's
// own node certificate and calls litemgr's ClusterManager directly, as
// node1's agent would but with requests no honest agent sends: acting as
// another node, joining under another node's name or identity, registering
// LMRs the manager never issued, taking victims' names, binding a service
// it never opened, and 300 binds at once. Each call must be refused with its
// own gRPC code, and change nothing of other nodes' (the suite compares the
// cluster with its snapshot).
//
//   node_attack MANAGER CERT KEY CA SELF_ID SELF_INC OTHER_NAME OTHER_ID
//               OTHER_INC VICTIM_LMR VICTIM_SERVICE VICTIM_SERVICE_ID
//
// Prints ok/FAIL lines; exit status: the failures (100: bad usage).
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "proto/lite/v1/manager.grpc.pb.h"

namespace {

int failures = 0;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK:
      return "OK";
    case grpc::CANCELLED:
      return "CANCELLED";
    case grpc::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "OTHER";
  }
}

// Expect WHAT: CALL's status is WANT.
void Expect(const std::string& what, grpc::StatusCode want,
            const std::function<grpc::Status(grpc::ClientContext*)>& call) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  const grpc::Status status = call(&context);
  const bool ok = status.error_code() == want;
  if (!ok) failures++;
  std::printf("  %-5s %s: %s (want %s)%s%s\n", ok ? "ok" : "FAIL", what.c_str(),
              CodeName(status.error_code()), CodeName(want),
              status.error_message().empty() ? "" : ": ",
              status.error_message().substr(0, 200).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 13) {
    std::fprintf(stderr,
                 "usage: node_attack MANAGER CERT KEY CA SELF_ID SELF_INC "
                 "OTHER_NAME OTHER_ID OTHER_INC VICTIM_LMR VICTIM_SERVICE "
                 "VICTIM_SERVICE_ID\n");
    return 100;
  }
  const std::string manager = argv[1];
  grpc::SslCredentialsOptions ssl;
  ssl.pem_cert_chain = ReadFile(argv[2]);
  ssl.pem_private_key = ReadFile(argv[3]);
  ssl.pem_root_certs = ReadFile(argv[4]);
  const uint32_t self_id = std::strtoul(argv[5], nullptr, 0);
  const uint64_t self_inc = std::strtoull(argv[6], nullptr, 0);
  const std::string other_name = argv[7];
  const uint32_t other_id = std::strtoul(argv[8], nullptr, 0);
  const uint64_t other_inc = std::strtoull(argv[9], nullptr, 0);
  const std::string victim_lmr = argv[10];
  const std::string victim_service = argv[11];
  const uint64_t victim_service_id = std::strtoull(argv[12], nullptr, 0);
  if (ssl.pem_cert_chain.empty() || ssl.pem_private_key.empty() ||
      ssl.pem_root_certs.empty()) {
    std::fprintf(stderr, "node_attack: cannot read the certificate files\n");
    return 100;
  }
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("litemgr");
  auto stub = lite::v1::ClusterManager::NewStub(
      grpc::CreateCustomChannel(manager, grpc::SslCredentials(ssl), args));

  lite::v1::NodeCaller self, other;
  self.set_node_id(self_id);
  self.set_incarnation(self_inc);
  other.set_node_id(other_id);
  other.set_incarnation(other_inc);
  lite::v1::Credentials root;  // uid 0: a compromised node claims anyone
  root.set_pid(1);

  // Identity: another node's name, with and without its id (cp H1, L4).
  Expect("Join as " + other_name + " with this node's certificate",
         grpc::PERMISSION_DENIED, [&](grpc::ClientContext* c) {
           lite::v1::JoinRequest r;
           lite::v1::JoinResponse resp;
           r.set_node_name(other_name);
           r.set_rdma_address("10.211.0.99:18600");
           return stub->Join(c, r, &resp);
         });
  Expect("Join as " + other_name + " restoring its id and incarnation",
         grpc::PERMISSION_DENIED, [&](grpc::ClientContext* c) {
           lite::v1::JoinRequest r;
           lite::v1::JoinResponse resp;
           r.set_node_name(other_name);
           r.set_rdma_address("10.211.0.99:18600");
           r.mutable_restore()->set_node_id(other_id);
           r.mutable_restore()->set_incarnation(other_inc);
           r.mutable_restore()->set_token(std::string(32, 'x'));
           return stub->Join(c, r, &resp);
         });
  // A session speaks for the node of its first heartbeat: node1's
  // certificate cannot open node2's, so it cannot answer node2's requests
  // (bind a ring, allocate memory) nor heartbeat for it.
  const auto session = [&](const lite::v1::AgentMessage& first) {
    return [&, first](grpc::ClientContext* c) {
      auto stream = stub->Session(c);
      lite::v1::ManagerMessage in;
      stream->Write(first);
      stream->WritesDone();
      while (stream->Read(&in)) {
      }
      return stream->Finish();
    };
  };
  lite::v1::AgentMessage beat;
  beat.mutable_heartbeat()->set_node_id(other_id);
  beat.mutable_heartbeat()->set_incarnation(other_inc);
  beat.mutable_heartbeat()->set_heartbeat_seq(1);
  Expect("Session whose first heartbeat is " + other_name + "'s",
         grpc::PERMISSION_DENIED, session(beat));
  lite::v1::AgentMessage answer;
  answer.mutable_result()->set_request_id(1);
  answer.mutable_result()->mutable_bound_service_ring();
  Expect("Session that opens with a forged agent answer (a bound ring)",
         grpc::INVALID_ARGUMENT, session(answer));
  // Acting for another node: every node RPC names its caller.
  Expect("AllocLmr as " + other_name, grpc::PERMISSION_DENIED,
         [&](grpc::ClientContext* c) {
           lite::v1::AllocLmrRequest r;
           lite::v1::AllocLmrResponse resp;
           *r.mutable_caller() = other;
           *r.mutable_owner() = root;
           r.set_name("br.b.alloc");
           r.set_size_bytes(4096);
           r.set_mode(0600);
           r.set_home_node_id(other_id);
           return stub->AllocLmr(c, r, &resp);
         });
  Expect("MapLmr " + victim_lmr + " as " + other_name, grpc::PERMISSION_DENIED,
         [&](grpc::ClientContext* c) {
           lite::v1::MapLmrRequest r;
           lite::v1::MapLmrResponse resp;
           *r.mutable_caller() = other;
           *r.mutable_requester() = root;
           r.set_name(victim_lmr);
           r.mutable_access()->set_read(true);
           return stub->MapLmr(c, r, &resp);
         });
  Expect("FreeLmr " + victim_lmr + " as " + other_name, grpc::PERMISSION_DENIED,
         [&](grpc::ClientContext* c) {
           lite::v1::FreeLmrRequest r;
           lite::v1::FreeLmrResponse resp;
           *r.mutable_caller() = other;
           *r.mutable_requester() = root;
           r.set_name(victim_lmr);
           return stub->FreeLmr(c, r, &resp);
         });
  Expect("RegisterService " + victim_service + " as " + other_name,
         grpc::PERMISSION_DENIED, [&](grpc::ClientContext* c) {
           lite::v1::RegisterServiceRequest r;
           lite::v1::RegisterServiceResponse resp;
           *r.mutable_caller() = other;
           *r.mutable_owner() = root;
           r.set_name("br.b.svc");
           r.set_mode(0711);
           r.set_port(9999);
           r.set_max_request_bytes(4096);
           r.set_max_reply_bytes(4096);
           r.set_depth(16);
           r.set_max_clients(16);
           return stub->RegisterService(c, r, &resp);
         });
  // Names and ids of its own making (cp M2, M5, M8).
  // An lmr_id names its home in its top 32 bits.
  const auto register_forged = [&](uint32_t id_node) {
    return [&, id_node](grpc::ClientContext* c) {
      lite::v1::RegisterLmrRequest r;
      lite::v1::RegisterLmrResponse resp;
      *r.mutable_caller() = self;
      *r.mutable_owner() = root;
      r.set_name("br.b.forged");
      r.set_size_bytes(4096);
      r.set_mode(0600);
      r.set_lmr_id((uint64_t{id_node} << 32) | 0x7fff0001u);
      r.set_memory_key(0x1234);
      auto* chunk = r.add_chunks();
      chunk->set_address(0x100000);
      chunk->set_length_bytes(4096);
      return stub->RegisterLmr(c, r, &resp);
    };
  };
  Expect("RegisterLmr of an lmr_id of this node the manager never issued",
         grpc::FAILED_PRECONDITION, register_forged(self_id));
  Expect("RegisterLmr of an lmr_id of " + other_name, grpc::PERMISSION_DENIED,
         register_forged(other_id));
  Expect("AllocLmr under the victim's name " + victim_lmr, grpc::ALREADY_EXISTS,
         [&](grpc::ClientContext* c) {
           lite::v1::AllocLmrRequest r;
           lite::v1::AllocLmrResponse resp;
           *r.mutable_caller() = self;
           *r.mutable_owner() = root;
           r.set_name(victim_lmr);
           r.set_size_bytes(4096);
           r.set_mode(0666);
           r.set_home_node_id(self_id);
           return stub->AllocLmr(c, r, &resp);
         });
  Expect("RegisterService under the victim's name " + victim_service,
         grpc::ALREADY_EXISTS, [&](grpc::ClientContext* c) {
           lite::v1::RegisterServiceRequest r;
           lite::v1::RegisterServiceResponse resp;
           *r.mutable_caller() = self;
           *r.mutable_owner() = root;
           r.set_name(victim_service);
           r.set_mode(0777);
           r.set_port(9999);
           r.set_max_request_bytes(4096);
           r.set_max_reply_bytes(4096);
           r.set_depth(16);
           r.set_max_clients(16);
           return stub->RegisterService(c, r, &resp);
         });
  // A bind is a request in the server's session: only after an open (cp M3).
  Expect("BindService " + victim_service + " without OpenService",
         grpc::FAILED_PRECONDITION, [&](grpc::ClientContext* c) {
           lite::v1::BindServiceRequest r;
           lite::v1::BindServiceResponse resp;
           *r.mutable_caller() = self;
           r.set_service_id(victim_service_id);
           r.set_reply_address(0x100000);
           r.set_reply_key(0x1234);
           r.set_reply_slot_bytes(4096);
           return stub->BindService(c, r, &resp);
         });
  Expect("BindService " + victim_service + " as " + other_name,
         grpc::PERMISSION_DENIED, [&](grpc::ClientContext* c) {
           lite::v1::BindServiceRequest r;
           lite::v1::BindServiceResponse resp;
           *r.mutable_caller() = other;
           r.set_service_id(victim_service_id);
           r.set_reply_address(0x100000);
           r.set_reply_key(0x1234);
           r.set_reply_slot_bytes(4096);
           return stub->BindService(c, r, &resp);
         });
  // The flood of review cp M3: once opened (as root: a compromised node
  // claims anyone), 300 binds at once, each a request in the server's
  // session. At most --max_pending_binds_per_node (256) are in flight; the
  // rest RESOURCE_EXHAUSTED. Nothing else (the suite then checks that the
  // victim's client on another node still calls the service).
  Expect("OpenService " + victim_service + " as root", grpc::OK,
         [&](grpc::ClientContext* c) {
           lite::v1::OpenServiceRequest r;
           lite::v1::OpenServiceResponse resp;
           *r.mutable_caller() = self;
           *r.mutable_requester() = root;
           r.set_name(victim_service);
           return stub->OpenService(c, r, &resp);
         });
  {
    constexpr int kBinds = 300;
    lite::v1::BindServiceRequest r;
    *r.mutable_caller() = self;
    r.set_service_id(victim_service_id);
    r.set_reply_address(0x100000);
    r.set_reply_key(0x1234);
    r.set_reply_slot_bytes(4096);
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<lite::v1::BindServiceResponse> answers(kBinds);
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, int> codes;
    int done = 0;
    for (int i = 0; i < kBinds; i++) {
      contexts.push_back(std::make_unique<grpc::ClientContext>());
      contexts.back()->set_deadline(std::chrono::system_clock::now() +
                                    std::chrono::seconds(30));
      stub->async()->BindService(contexts.back().get(), &r, &answers[i],
                                 [&](grpc::Status status) {
                                   std::lock_guard<std::mutex> lock(mu);
                                   codes[CodeName(status.error_code())]++;
                                   done++;
                                   cv.notify_one();
                                 });
    }
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done == kBinds; });
    std::string seen;
    int other = 0;
    for (const auto& [code, n] : codes) {
      seen += " " + code + "=" + std::to_string(n);
      if (code != "OK" && code != "RESOURCE_EXHAUSTED") other += n;
    }
    const bool ok = other == 0;
    if (!ok) failures++;
    std::printf(
        "  %-5s %d BindService of %s at once: each OK or RESOURCE_EXHAUSTED "
        "(--max_pending_binds_per_node), no other answer:%s\n",
        ok ? "ok" : "FAIL", kBinds, victim_service.c_str(), seen.c_str());
  }
  return failures > 99 ? 99 : failures;
}
