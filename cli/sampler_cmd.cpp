// ddpsim sampler (cli/verb.hpp): DistributedSampler's audit, which example IDs each rank sees.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/cli_io.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "models/sampler.hpp"
#include "report/sweep_report.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

struct SamplerOptions {
  std::int64_t dataset_size = 0;
  int world_size = 0;
  std::int64_t batch_size = 32;
  int epochs = 1;
  std::uint64_t seed = 0;
  bool drop_last = false;
  bool no_set_epoch = false;
  bool no_shuffle = false;
  bool ids = false;
  std::string json;
};

int sampler(const SamplerOptions& o) {
  const ddpsim::models::SamplerConfig config{o.dataset_size, o.world_size, !o.no_shuffle, o.seed, o.drop_last};
  const auto audit = ddpsim::models::audit_sampler(config, o.batch_size, o.epochs, !o.no_set_epoch);
  const bool show_ids = o.ids || o.dataset_size * o.epochs <= 4096;
  ddpsim::report::write_sampler_audit(std::cout, audit, show_ids);
  if (!o.json.empty()) write_file(o.json, ddpsim::report::sampler_to_json(audit));
  return 0;
}

}  // namespace

Verb add_sampler(CLI::App& app) {
  auto o = std::make_shared<SamplerOptions>();
  CLI::App* cmd = app.add_subcommand("sampler", "Audit DistributedSampler: which example IDs each rank sees");
  cmd->add_option("--dataset-size", o->dataset_size, "Examples in the dataset (IDs 0..N-1)")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 32));
  cmd->add_option("--world-size", o->world_size, "Ranks")->required()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--batch-size", o->batch_size, "DataLoader batch size per rank (default 32)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 32));
  cmd->add_option("--epochs", o->epochs, "Epochs (default 1)")->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", o->seed, "Sampler seed (default 0)");
  cmd->add_flag("--drop-last", o->drop_last, "DistributedSampler(drop_last=True): truncate, do not pad");
  cmd->add_flag("--no-set-epoch", o->no_set_epoch, "Never call set_epoch(): every epoch reuses epoch 0's order");
  cmd->add_flag("--no-shuffle", o->no_shuffle, "DistributedSampler(shuffle=False)");
  cmd->add_flag("--ids", o->ids, "List every rank's example IDs (default: only for small datasets)");
  cmd->add_option("--json", o->json, "Write the audit as JSON to this file");
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return sampler(*o);
          }};
}

}  // namespace ddpsim::cli
