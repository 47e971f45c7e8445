#pragma once
// `ddpsim profile|sweep|measure|overlap|network`: python/ddpsim_torch's verbs, run
// by the ddpsim binary (cli/torch_verbs.cpp).

namespace ddpsim::cli {

/// Whether `verb` is one of ddpsim_torch's.
bool is_torch_verb(const char* verb);
/// Replaces this process with `python -m ddpsim_torch VERB ARGS...` (an
/// interpreter that has torch, the package on PYTHONPATH, the malloc
/// settings); returns 2, having said why, where it cannot.
int run_torch_verb(int argc, char** argv);

}  // namespace ddpsim::cli
