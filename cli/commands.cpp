// ddpsim's command line: the subcommands (cli/verb.hpp, one file each), the
// parse, and the exit codes of their errors (README.md#exit-codes).

#include "cli/commands.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "api/api_data.hpp"
#include "cli/exit_codes.hpp"
#include "cli/mpi_session.hpp"
#include "cli/torch_verbs.hpp"
#include "cli/verb.hpp"

namespace ddpsim::cli {

// The work budget's options (run, report, advise: one run each).
void add_budget(CLI::App* cmd, ddpsim::scenarios::WorkBudget& budget) {
  cmd->add_option(
         "--max-rank-ops", budget.max_rank_ops,
         "Refuse a run estimated past this many rank-operations (default 2e11; ddpsim check prints the estimate)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-memory-gb", budget.max_memory_gb,
                  "Refuse a run whose state and trace are estimated past this many GB (default 8)")
      ->check(CLI::PositiveNumber);
}

namespace {

// A parsed subcommand run, its errors turned into exit codes and one line on stderr.
int run_guarded(const Verb& verb, const MpiSession& mpi) {
  try {
    // tests/exit_codes.sh plants an internal error to check its exit code and message.
    if (std::getenv("DDPSIM_PLANT_INTERNAL_ERROR") != nullptr)
      throw std::logic_error("planted by DDPSIM_PLANT_INTERNAL_ERROR");
    return verb.run(mpi);
  } catch (...) {
    // One mapping of exceptions to messages and exit codes, the API's (api/error.cpp).
    const ddpsim::Error e = ddpsim::api::translate(std::current_exception());
    if (e.kind() == ddpsim::ErrorKind::kInternal) {
      fmt::print(stderr,
                 "ddpsim: internal error: {}\nThis is a bug in ddpsim: please report it with the command line and "
                 "its input files (README.md#exit-codes)\n",
                 e.what());
    } else {
      fmt::print(stderr, "ddpsim: error: {}\n", e.what());
    }
    return e.exit_code();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && is_torch_verb(argv[1])) return run_torch_verb(argc, argv);  // python/ddpsim_torch's verbs
  CLI::App app{"ddpsim: a deterministic simulator of PyTorch DistributedDataParallel training"};
  app.set_version_flag("--version", "ddpsim " DDPSIM_VERSION);
  app.footer(
      "Also: ddpsim profile|sweep|measure|overlap|network ... runs python/ddpsim_torch's verbs (their own --help) with "
      "an interpreter that has torch (python/README.md)");
  app.require_subcommand(1);
  const std::vector<Verb> verbs = {add_run(app),     add_report(app),    add_check(app),       add_buckets(app),
                                   add_sampler(app), add_calibrate(app), add_collectives(app), add_memory(app),
                                   add_explain(app), add_advise(app),    add_validate(app),    add_import_trace(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "ddpsim: error: the command line: {}\nRun with --help for more information.\n", e.what());
    return kExitBadInput;
  }
  const auto chosen = std::find_if(verbs.begin(), verbs.end(), [](const Verb& v) { return v.app->parsed(); });
  if (chosen == verbs.end()) return kExitInternal;
  // Under mpirun or srun: run splits its sweep over the processes and advise
  // its search; any other command runs on rank 0 alone, so its output is one process's.
  const MpiSession mpi;
  if (mpi.size() > 1 && !chosen->splits) {
    if (mpi.rank() != 0) return 0;
    fmt::print(stderr,
               "ddpsim: {} MPI processes: only run and advise split their work; rank 0 runs this command alone\n",
               mpi.size());
  }
  return run_guarded(*chosen, mpi);
}

}  // namespace ddpsim::cli
