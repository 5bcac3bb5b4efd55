// The poolkit command-line program.
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.hpp"
#include "poolkit/error.hpp"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "poolkit - neural-network pooling operators, forward and backward\n"
               "\n"
               "usage: poolkit <command> [options]    poolkit --version\n"
               "\n"
               "commands:\n"
               "  demo     walk through max and average pooling on small worked examples\n"
               "  bench    time the standard cases against a plain memory copy\n"
               "  help     show this text\n"
               "\n"
               "Run `poolkit <command> --help` for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      usage(stdout);
      return 0;
    }
    if (cmd == "--version") {
      std::printf("poolkit %s\n", POOLKIT_VERSION);
      return 0;
    }
    if (cmd == "demo") return poolkit::cli::demo(argc - 1, argv + 1);
    if (cmd == "bench") return poolkit::cli::bench(argc - 1, argv + 1);
    std::fprintf(stderr, "poolkit: unknown command '%s'\n\n", cmd.c_str());
    usage(stderr);
    return 2;
  } catch (const poolkit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
