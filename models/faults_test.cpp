#include "models/faults.hpp"

#include <doctest/doctest.h>

#include <variant>

using namespace ddpsim;
using models::FaultType;
namespace fault = models::fault;

namespace {

// A fault of the variant's alternative `I`, default fields.
template <std::size_t I>
models::Fault nth_kind() {
  return models::Fault{{0}, models::FaultKind(std::in_place_index<I>)};
}

template <std::size_t... I>
std::vector<models::Fault> every_kind(std::index_sequence<I...>) {
  return {nth_kind<I>()...};
}

}  // namespace

TEST_CASE("what each fault kind leaves to the faster evaluators") {
  struct Kind {
    FaultType type;
    bool lockstep;  // only slows a rank or a link: rank-major may run it
    bool uniform;   // every rank issues the same ops: levelized may run it
  };
  const Kind kinds[] = {
      {FaultType::kSkipBackward, false, false},    {FaultType::kSkipIteration, false, false},
      {FaultType::kUnevenBatches, false, false},   {FaultType::kExtraCollective, false, false},
      {FaultType::kUnusedParameters, false, false}, {FaultType::kSlowdown, true, false},
      {FaultType::kSlowLink, true, true},          {FaultType::kRank0Artifact, true, false},
      {FaultType::kCrash, false, false},           {FaultType::kSkipUnit, false, false},
      {FaultType::kMicroBatches, false, false},    {FaultType::kLinkDown, false, false},
  };
  const std::vector<models::Fault> faults = every_kind(std::make_index_sequence<models::kFaultTypes>());
  REQUIRE(faults.size() == std::size(kinds));
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const Kind& k = kinds[i];
    const models::Fault& f = faults[i];
    CAPTURE(models::to_string(k.type));
    CHECK(f.type() == k.type);
    CHECK(f.keeps_lockstep() == k.lockstep);
    CHECK(f.keeps_program_uniform() == k.uniform);
    // A fault that keeps the program uniform keeps lockstep too.
    CHECK((!f.keeps_program_uniform() || f.keeps_lockstep()));
  }
}

TEST_CASE("when a fault applies: its ranks, and its iteration, range or period") {
  models::Fault f{{2}, fault::Crash{3, std::nullopt}};
  CHECK(f.applies(2, 3));
  CHECK_FALSE(f.applies(2, 4));
  CHECK_FALSE(f.applies(1, 3));
  CHECK(f.as<fault::Crash>()->iteration == 3);
  CHECK(f.as<fault::Slowdown>() == nullptr);
  f.kind = fault::Slowdown{2.0, 3, 5, false};
  CHECK(f.applies(2, 5));
  CHECK_FALSE(f.applies(2, 6));
  CHECK_FALSE(f.applies(2, 2));
  f.kind = fault::Slowdown{2.0, 0, -1, false};
  CHECK(f.applies(2, 1'000'000));
  f.kind = fault::Rank0Artifact{-1, 4, {}};
  CHECK(f.applies(2, 3));
  CHECK(f.applies(2, 7));
  CHECK_FALSE(f.applies(2, 4));
  f.kind = fault::Rank0Artifact{5, 0, {}};
  CHECK(f.applies(2, 5));
  CHECK_FALSE(f.applies(2, 9));
  f.kind = fault::SlowLink{4, std::nullopt};
  CHECK(f.applies(2, 100));
  CHECK_FALSE(f.applies(3, 100));
  // From a time on it changes prices mid-run: the engine's time order only.
  CHECK(f.keeps_lockstep());
  f.kind = fault::SlowLink{4, sim::Time::from_ms(20)};
  CHECK_FALSE(f.keeps_lockstep());
  CHECK_FALSE(f.keeps_program_uniform());
}

TEST_CASE("a rank's missing batches: the most its uneven_batches faults give") {
  const std::vector<models::Fault> faults = {{{1}, fault::UnevenBatches{2}},
                                             {{1, 2}, fault::UnevenBatches{3}},
                                             {{1}, fault::SkipIteration{0}}};
  CHECK(models::fewer_batches(faults, 0) == 0);
  CHECK(models::fewer_batches(faults, 1) == 3);
  CHECK(models::fewer_batches(faults, 2) == 3);
}
