#include <iostream>
#include <string>
#include <vector>

#include "cmd/litedev/litedev.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return lite::litedev::RunLitedev(args, std::cout, std::cerr);
}
