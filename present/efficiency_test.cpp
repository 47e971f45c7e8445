#include "present/efficiency.hpp"

#include <doctest/doctest.h>

using namespace ddpsim;

TEST_CASE("below 80 % the flag names the costliest overhead; at or above it, nothing") {
  CHECK(present::low_efficiency_flag(0.8, 5, 1, 1).empty());
  CHECK(present::low_efficiency_flag(0.79, 0.42, 0.1, 0.2) == "  below 80%: exposed communication costs most (0.42 ms per step)");
  CHECK(present::low_efficiency_flag(0.5, 0.1, 2, 0.3) == "  below 80%: straggler wait costs most (2 ms per step)");
  CHECK(present::costliest_overhead(0.1, 0.2, 0.3).name == "data loading");
}
