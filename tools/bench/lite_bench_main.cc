// lite-bench: LITE latency and bandwidth. See tools/bench/README.md.
#include <iostream>
#include <string>
#include <vector>

#include "tools/bench/lite_bench.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = lite::bench::RunLiteBench(
      args, std::cout, std::cerr,
      [](const std::string& path) { return lite::Lite::Open(path); });
  std::cout.flush();
  return rc;
}
