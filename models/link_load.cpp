#include "models/link_load.hpp"

#include <algorithm>

namespace ddpsim::models {

std::vector<LinkLoad> busiest_links(std::vector<LinkLoad> links, std::size_t count) {
  std::stable_sort(links.begin(), links.end(), [](const LinkLoad& a, const LinkLoad& b) {
    if (a.busy_share != b.busy_share) return a.busy_share > b.busy_share;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.name < b.name;
  });
  if (links.size() > count) links.resize(count);
  return links;
}

}  // namespace ddpsim::models
