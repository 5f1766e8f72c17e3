// kiln-run as a function: for its main, and for the fuzzer that runs it whole on mutated
// graphs (tools/kiln-run-fuzz).
#pragma once

namespace kiln::tools {

// Runs kiln-run on a command line (argv[0] is the program's name) and returns its exit
// code: 0, 2 on a mistake (one line on stderr), 1 on an unexpected std::exception.
// Relative paths are read from the current directory.
int kilnRun(int argc, char** argv);

}  // namespace kiln::tools
