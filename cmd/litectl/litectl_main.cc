// litectl: LITE's operator CLI. See docs/litectl.md and `litectl --help`.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cmd/litectl/commands.h"

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C and SIGTERM go to one thread (blocked everywhere else, before
  // gRPC starts threads): a streaming command ends cleanly, anything else
  // exits at once.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  lite::litectl::Interrupt interrupt;
  std::thread([&signals, &interrupt] {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0 || !interrupt.Fire()) _exit(128 + sig);
    // A second signal while the stream winds down: stop waiting.
    sigwait(&signals, &sig);
    _exit(128 + sig);
  }).detach();

  std::vector<std::string> args(argv + 1, argv + argc);
  const lite::litectl::Environment env{
      .lite_manager = Env("LITE_MANAGER"),
      .lite_agent = Env("LITE_AGENT"),
      .lite_tls_cert = Env("LITE_TLS_CERT"),
      .lite_tls_key = Env("LITE_TLS_KEY"),
      .lite_tls_ca = Env("LITE_TLS_CA"),
      .lite_agent_tls_name = Env("LITE_AGENT_TLS_NAME"),
      .lite_insecure = Env("LITE_INSECURE")};
  const int rc =
      lite::litectl::RunLitectl(args, env, std::cout, std::cerr, &interrupt);
  std::cout.flush();
  // Skip static destructors: the signal thread may still be waiting.
  _exit(rc);
}
