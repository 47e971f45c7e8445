// ddpsim-real: the real data-parallel trainer. Launch with
//   mpirun -np W build/real_backend/ddpsim-real train [options]
// (as root OpenMPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 and
// OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and --oversubscribe past the core count).
// Exit codes: 0 done, 2 usage, 1 internal error.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "real_backend/mpi_transport.hpp"
#include "real_backend/trainer.hpp"

namespace {

using ddpsim::real::TrainerOptions;

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CLI::ValidationError("cannot read " + path);
  std::vector<float> v;
  float f;
  while (in.read(reinterpret_cast<char*>(&f), sizeof f)) v.push_back(f);
  return v;
}

int compare(const std::string& a, const std::string& b, double rtol) {
  const auto x = read_floats(a), y = read_floats(b);
  if (x.size() != y.size() || x.empty()) {
    fmt::print("{} and {} hold {} and {} parameters\n", a, b, x.size(), y.size());
    return 1;
  }
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(static_cast<double>(x[i]) - y[i]) / std::max(1e-3, std::fabs(static_cast<double>(x[i])));
    if (d > worst) worst = d, at = i;
  }
  fmt::print("{} parameters, largest relative difference {:.3g} (parameter {}), tolerance {:.3g}: {}\n", x.size(), worst,
             at, rtol, worst <= rtol ? "equal" : "DIFFERENT");
  return worst <= rtol ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddpsim-real: a real DDP trainer (MPI on CPUs) that measures itself"};
  app.require_subcommand(1);
  TrainerOptions o;
  std::string widths = "8,64,64,1", params_out, json_prefix;
  bool no_shuffle = false;
  CLI::App* train = app.add_subcommand("train", "Train; run one process per rank under mpirun");
  train->add_option("--widths", widths, "Layer widths: input,hidden...,output (default 8,64,64,1)");
  train->add_option("--dataset-size", o.dataset_size, "Synthetic examples (default 128)")->check(CLI::PositiveNumber);
  train->add_option("--batch-size", o.batch_size, "Per rank (default 8)")->check(CLI::PositiveNumber);
  train->add_option("--epochs", o.epochs, "Default 1")->check(CLI::PositiveNumber);
  train->add_option("--max-steps", o.max_steps, "Stop after this many steps");
  train->add_option("--seed", o.seed, "Default 0");
  train->add_option("--lr", o.lr, "Default 0.01");
  train->add_option("--momentum", o.momentum, "Default 0.9");
  train->add_option("--bucket-cap-mb", o.bucket_cap_mb, "Default 25")->check(CLI::PositiveNumber);
  train->add_option("--first-bucket-mb", o.first_bucket_mb, "Default 1")->check(CLI::PositiveNumber);
  train->add_flag("--no-shuffle", no_shuffle, "DistributedSampler(shuffle=False)");
  train->add_option("--params", params_out, "Rank 0 writes the final parameters here (raw fp32)");
  train->add_option("--json", json_prefix, "Each rank writes PREFIX.rank<r>.json: timings and example IDs");
  std::string a, b;
  double rtol = 1e-5;
  CLI::App* cmp = app.add_subcommand("compare", "Compare two --params files");
  cmp->add_option("a", a)->required();
  cmp->add_option("b", b)->required();
  cmp->add_option("--rtol", rtol, "Relative tolerance (default 1e-5)");
  try {
    app.parse(argc, argv);
    o.shuffle = !no_shuffle;
    std::vector<int> w;
    std::stringstream ss(widths);
    for (std::string item; std::getline(ss, item, ',');) w.push_back(std::stoi(item));
    if (w.size() < 2) throw CLI::ValidationError("--widths needs at least input and output");
    o.shape.input = w.front();
    o.shape.output = w.back();
    o.shape.hidden.assign(w.begin() + 1, w.end() - 1);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim-real: error: bad --widths '{}': {}\n", widths, e.what());
    return 2;
  }
  try {
    if (*cmp) return compare(a, b, rtol);
    ddpsim::real::MpiTransport transport(&argc, &argv);
    const auto result = ddpsim::real::train(transport, o);
    const int rank = transport.rank();
    if (rank == 0 && !params_out.empty()) {
      std::ofstream out(params_out, std::ios::binary);
      out.write(reinterpret_cast<const char*>(result.parameters.data()),
                static_cast<std::streamsize>(result.parameters.size() * sizeof(float)));
    }
    if (!json_prefix.empty()) {
      nlohmann::ordered_json j;
      j["rank"] = rank;
      j["world_size"] = transport.world_size();
      j["transport"] = "mpi";
      j["bucket_bytes"] = result.bucket_bytes;
      j["ids_per_epoch"] = result.ids_per_epoch;
      nlohmann::ordered_json steps = nlohmann::ordered_json::array();
      for (const auto& s : result.steps) {
        steps.push_back({{"iteration", s.iteration}, {"data_ms", s.data_ms}, {"compute_ms", s.compute_ms},
                         {"exposed_comm_ms", s.exposed_comm_ms}, {"step_ms", s.step_ms}});
      }
      j["steps"] = std::move(steps);
      std::ofstream(fmt::format("{}.rank{}.json", json_prefix, rank)) << j.dump(2) << "\n";
    }
    transport.barrier();
    if (rank == 0) fmt::print("trained {} steps on {} rank(s)\n", result.steps.size(), transport.world_size());
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim-real: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
