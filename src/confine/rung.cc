#include "confine/rung.h"

namespace corral {

std::string_view RungName(Rung rung) {
  switch (rung) {
    case Rung::kFull: return "full";
    case Rung::kLandlock4To5: return "landlock-4-5";
    case Rung::kLandlock1To3: return "landlock-1-3";
    case Rung::kNoLandlock: return "no-landlock";
    case Rung::kMaskedProc: return "masked-proc";
    case Rung::kNoUserNamespaces: return "no-userns";
  }
  return "full";
}

std::string RungsText(const std::vector<Rung>& rungs) {
  std::string text;
  for (Rung rung : rungs) text += (text.empty() ? "" : " + ") + std::string(RungName(rung));
  return text.empty() ? "full" : text;
}

}  // namespace corral
