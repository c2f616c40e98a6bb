// Rule 2 of step.hpp matches the k-th send from rank a to rank b on a channel with the k-th
// receive at b from a. An engine keeps, per program, the started sends to it that found no
// receive yet and its started receives that found no send yet, each first-in first-out per peer.
// Usually a list holds zero or one entry, so the first sits inline in the program's hot state
// (count and first) and the rest in a PostedRest kept apart.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ddlsim::sim::detail {

// The entries after the first, with their peers in an array of their own: a hierarchical
// leader's list holds its chain's 32 receives ahead of its ring's, and each ring match searched
// past them; a search over 4-byte peers reads an eighth of the memory.
template <typename Entry> struct PostedRest {
  std::vector<std::int32_t> peers;
  std::vector<Entry> entries;
};

// Appends `entry` (from Entry::peer) to the list of `count` entries (`first`, then `rest`).
template <typename Entry>
void put_posted(std::uint32_t& count, Entry& first, PostedRest<Entry>& rest, const Entry& entry) {
  if (count++ == 0) {
    first = entry;
    return;
  }
  rest.peers.push_back(entry.peer);
  rest.entries.push_back(entry);
}

// Removes the first entry from `peer` into `found`; false if there is none.
template <typename Entry>
bool take_posted(std::uint32_t& count, Entry& first, PostedRest<Entry>& rest, std::int32_t peer,
                 Entry& found) {
  if (count == 0) return false;
  if (first.peer == peer) {
    found = first;
    if (--count != 0) {
      first = rest.entries.front();
      rest.entries.erase(rest.entries.begin());
      rest.peers.erase(rest.peers.begin());
    }
    return true;
  }
  const auto at = std::find(rest.peers.begin(), rest.peers.end(), peer);
  if (at == rest.peers.end()) return false;
  const auto index = at - rest.peers.begin();
  found = rest.entries[static_cast<std::size_t>(index)];
  rest.entries.erase(rest.entries.begin() + index);
  rest.peers.erase(at);
  --count;
  return true;
}

} // namespace ddlsim::sim::detail
