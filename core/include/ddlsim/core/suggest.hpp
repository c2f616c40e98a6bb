// "Did you mean ...?" for unknown keys and names.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ddlsim {

// Edit distance (insert, delete, substitute, transpose adjacent) between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a plausible typo.
std::string nearest_match(std::string_view word, std::span<const std::string> candidates);

// ` (did you mean "X"?)` or "" when there is no plausible match.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

// "a, b or c" for listing choices in messages.
std::string join_choices(std::span<const std::string> choices);

} // namespace ddlsim
