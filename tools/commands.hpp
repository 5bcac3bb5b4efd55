#pragma once
// One function per subcommand of the command-line program; each takes its own argv (argv[0] = its name).
namespace poolkit::cli {
int demo(int argc, char** argv);
int bench(int argc, char** argv);
}  // namespace poolkit::cli
