// liteop: LMR operations from the command line. See `liteop --help`.
#include <iostream>
#include <string>
#include <vector>

#include "cmd/liteop/liteop.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = lite::liteop::RunLiteop(
      args, std::cout, std::cerr,
      [](const std::string& path) { return lite::Lite::Open(path); });
  std::cout.flush();
  return rc;
}
