#include "confine/etc_view.h"

#include "base/mutant.h"
#include "kernel/idmapped_tree.h"
#include "kernel/kernel_abi.h"
#include "policy/roots.h"

namespace corral {

Result<EtcViewResult> PrepareEtcView(const Policy& policy, MountPlan& plan, std::optional<EtcViewOutcome> as_made) {
  EtcViewResult result;
  if (policy.etc_view() != EtcView::kAsOthers) return result;
  // The etc_masks mutant (base/mutant.h): /etc bound as it is.
  if (MutantActive(Mutant::kEtcMasks)) {
    result.outcome = EtcViewOutcome::kIdmapped;
    return result;
  }
  MountOp* etc = nullptr;
  for (MountOp& op : plan.ops) {
    if (op.kind == MountKind::kBind && std::string_view(op.target) == "/etc") etc = &op;
  }
  // Not bound at all (a forbid_read of /etc masks it whole): nothing to hide.
  if (etc == nullptr) return result;
  uint64_t attrs = kabi::kMountAttrRdonly | kabi::kMountAttrNosuid | kabi::kMountAttrNodev;
  if (etc->Has(MountFlag::kNoexec) && !MutantActive(Mutant::kNoexecBinds)) attrs |= kabi::kMountAttrNoexec;
  // A warm call's plan, compared and never spawned: the /etc view as the
  // warm sandbox made it, the same flags and masks, nothing opened.
  if (as_made == EtcViewOutcome::kIdmapped) {
    etc->flags |= MountFlag::kPrepared;
    result.outcome = EtcViewOutcome::kIdmapped;
    return result;
  }
  Result<UniqueFd> tree = as_made == EtcViewOutcome::kWalked
                              ? Result<UniqueFd>(Error(ErrorKind::kUnsupported, "as the warm sandbox's /etc"))
                              : OpenTreeSeenAsOthers(etc->source, etc->pin, attrs);
  if (tree.ok()) {
    etc->fd = tree->get();
    etc->flags |= MountFlag::kPrepared;
    plan.Own(std::move(*tree));
    result.outcome = EtcViewOutcome::kIdmapped;
    return result;
  }
  result.reason = tree.error().message();
  CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> masks, DiscoverEtcSecrets(0));
  for (const MaskedPath& mask : masks) plan.AddMask(mask);
  result.outcome = EtcViewOutcome::kWalked;
  result.masks = masks.size();
  return result;
}

Result<std::vector<MaskedPath>> MasksWithoutIdmap(const Policy& policy) {
  std::vector<MaskedPath> masks = policy.masks();
  if (policy.etc_view() != EtcView::kAsOthers) return masks;
  CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> etc, DiscoverEtcSecrets(0));
  masks.insert(masks.end(), etc.begin(), etc.end());
  return masks;
}

}  // namespace corral
