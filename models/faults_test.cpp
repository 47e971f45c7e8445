#include "models/faults.hpp"

#include <doctest/doctest.h>

using namespace ddpsim;
using models::FaultType;

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
      {FaultType::kCrash, false, false},
  };
  for (const Kind& k : kinds) {
    CAPTURE(models::to_string(k.type));
    models::Fault f;
    f.type = k.type;
    CHECK(f.keeps_lockstep() == k.lockstep);
    CHECK(f.keeps_program_uniform() == k.uniform);
    // A fault that keeps the program uniform keeps lockstep too.
    CHECK((!f.keeps_program_uniform() || f.keeps_lockstep()));
  }
}

TEST_CASE("when a fault applies: its ranks, and its iteration, range or period") {
  models::Fault f;
  f.ranks = {2};
  f.type = FaultType::kCrash;
  f.iteration = 3;
  CHECK(f.applies(2, 3));
  CHECK_FALSE(f.applies(2, 4));
  CHECK_FALSE(f.applies(1, 3));
  f.type = FaultType::kSlowdown;
  f.until_iteration = 5;
  CHECK(f.applies(2, 5));
  CHECK_FALSE(f.applies(2, 6));
  CHECK_FALSE(f.applies(2, 2));
  f.type = FaultType::kRank0Artifact;
  f.every = 4;
  CHECK(f.applies(2, 3));
  CHECK(f.applies(2, 7));
  CHECK_FALSE(f.applies(2, 4));
  f.type = FaultType::kSlowLink;
  CHECK(f.applies(2, 100));
}
