// Whether a name is one of the common public suffixes under which unrelated
// owners register names (co.uk, github.io, amazonaws.com, ...), so that
// --allow-host *.SUFFIX would open every one of them and is refused.
//
// The list (public_suffix.cc) is a deliberately small subset of the Public
// Suffix List: the country second levels and hosting platforms a command
// most often meets. A public suffix missing from it is not refused:
// *.SUFFIX is taken as written, and opens whatever lies below it. A single
// label (com, io, uk) is a top-level domain, which the caller refuses
// without asking here.
//
//   if (IsCommonPublicSuffix("co.uk")) ...   // true; "example.co.uk" is false
#pragma once

#include <span>
#include <string_view>

namespace corral {

// `name` lowercase, without a trailing dot.
bool IsCommonPublicSuffix(std::string_view name);

// The whole list, sorted.
std::span<const std::string_view> CommonPublicSuffixes();

}  // namespace corral
