// liteagent: LITE's per-node agent for production nodes. It drives lite.ko
// over its generic netlink family, and nothing else: the in-process fake of
// lite.ko and its test-only flags are in liteagent_fake. See docs/agent.md.
#include "agent/agent_main.h"

int main(int argc, char** argv) {
  return lite::agent::AgentMain(
      argc, argv,
      lite::agent::AgentMainOptions{
          .program = "liteagent",
          .usage =
              "LITE's per-node agent: joins litemgr, keeps the node's "
              "session, programs lite.ko over generic netlink, serves "
              "lite.v1.NodeAgent.\n"
              "Usage: liteagent --rdma_address=IP:CM_PORT "
              "[--manager=HOST:PORT] [--node_name=NAME] [--listen=HOST:PORT] "
              "...\n"
              "Needs lite.ko loaded and CAP_NET_ADMIN. For tests without "
              "lite.ko, liteagent_fake --module=fake. See docs/agent.md.",
          .modules = {lite::agent::NetlinkModuleChoice()},
          .other_modules =
              "the in-process fake of lite.ko (--module=fake) is not in this "
              "binary: it is in liteagent_fake (//agent:liteagent_fake), for "
              "tests and laptops",
      });
}
