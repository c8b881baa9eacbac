// litenl: the command line for lite.ko's generic netlink family. See
// `litenl --help` and cmd/litenl/litenl.h.
#include <iostream>
#include <string>
#include <vector>

#include "cmd/litenl/litenl.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = lite::litenl::RunLitenl(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
