#include "sim/small_list.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace {

using ddpsim::sim::SmallList;

std::vector<int> contents(const SmallList<int, 2>& list) {
  std::vector<int> out;
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(list[i]);
  return out;
}

}  // namespace

TEST_CASE("SmallList keeps order in place and past its inline elements") {
  SmallList<int, 2> list;
  CHECK(list.empty());
  for (int v : {10, 20, 30, 40, 50}) list.push_back(v);
  CHECK(list.size() == 5);
  CHECK(contents(list) == std::vector<int>{10, 20, 30, 40, 50});
  list.pop_back();
  CHECK(contents(list) == std::vector<int>{10, 20, 30, 40});
  list.erase_if([](int v) { return v == 10 || v == 30; });
  CHECK(contents(list) == std::vector<int>{20, 40});
  list.push_back(60);
  list.push_back(70);
  CHECK(contents(list) == std::vector<int>{20, 40, 60, 70});
  list.clear();
  CHECK(list.empty());
  list.push_back(80);
  CHECK(contents(list) == std::vector<int>{80});
}
