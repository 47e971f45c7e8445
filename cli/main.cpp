#include "cli/commands.hpp"

int main(int argc, char** argv) { return ddpsim::cli::main(argc, argv); }
