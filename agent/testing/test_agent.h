// The Agent the agent's tests run against a FakeManagerServer and a
// FakeModule: short timeouts and backoffs, so a test of reconnects or
// retries takes milliseconds. A test changes what it needs in the options.
#ifndef LITE_AGENT_TESTING_TEST_AGENT_H_
#define LITE_AGENT_TESTING_TEST_AGENT_H_

#include <memory>
#include <string>

#include "agent/agent.h"
#include "agent/fake_module.h"

namespace lite::agent::testing {

// Node "n1" at 127.0.0.1:7471, joining the manager at `manager_address`.
AgentOptions TestAgentOptions(const std::string& manager_address);

// An Agent with `options` on `module`, its channel to the manager
// reconnecting within 10–50 ms (gRPC's own backoff otherwise waits up to
// seconds after the fake manager restarts).
std::unique_ptr<Agent> MakeTestAgent(const AgentOptions& options,
                                     FakeModule* module);

}  // namespace lite::agent::testing

#endif  // LITE_AGENT_TESTING_TEST_AGENT_H_
