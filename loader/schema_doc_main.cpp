// ddpsim_schema_doc: prints docs/scenario-format.md's generated key tables
// (schema::markdown()). scripts/gen_docs.sh puts them into the doc; the
// ctest docs.scenario_schema fails when the committed doc differs.

#include <iostream>

#include "loader/schema.hpp"

int main() {
  std::cout << ddpsim::scenarios::schema::markdown();
  return 0;
}
