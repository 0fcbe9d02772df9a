#include "net/destination.h"

#include <algorithm>
#include <vector>

#include "base/invariant.h"
#include "base/mutant.h"
#include "net/user_text.h"

namespace corral {
namespace {

struct RowText {
  std::string_view block;
  AddressRange range;  // for a row that carries IPv4, unused: that address decides
  Embedding embedding = Embedding::kNone;
  size_t ipv4_at = 0;  // the byte where the carried IPv4 address starts
};

// The special ranges, the first match deciding: a row inside another stands
// before it.
constexpr RowText kRows[] = {
    {"169.254.169.254/32", AddressRange::kCloudMetadata},
    {"100.100.100.200/32", AddressRange::kCloudMetadata},
    {"0.0.0.0/8", AddressRange::kUnspecified},
    {"127.0.0.0/8", AddressRange::kLoopback},
    {"10.0.0.0/8", AddressRange::kPrivate},
    {"172.16.0.0/12", AddressRange::kPrivate},
    {"192.168.0.0/16", AddressRange::kPrivate},
    {"169.254.0.0/16", AddressRange::kLinkLocal},
    {"100.64.0.0/10", AddressRange::kSharedAddressSpace},
    {"192.0.0.0/24", AddressRange::kProtocolAssignments},
    {"192.0.2.0/24", AddressRange::kDocumentation},
    {"198.51.100.0/24", AddressRange::kDocumentation},
    {"203.0.113.0/24", AddressRange::kDocumentation},
    {"198.18.0.0/15", AddressRange::kBenchmarking},
    {"224.0.0.0/4", AddressRange::kMulticast},
    {"240.0.0.0/4", AddressRange::kReserved},

    {"fd00:ec2::254/128", AddressRange::kCloudMetadata},
    {"::/128", AddressRange::kUnspecified},
    {"::1/128", AddressRange::kLoopback},
    {"::ffff:0:0/96", AddressRange::kPublic, Embedding::kIpv4Mapped, 12},
    {"::/96", AddressRange::kPublic, Embedding::kIpv4Compatible, 12},
    {"64:ff9b::/96", AddressRange::kPublic, Embedding::kNat64, 12},
    {"64:ff9b:1::/96", AddressRange::kPublic, Embedding::kNat64, 12},
    {"64:ff9b:1::/48", AddressRange::kUnreadNat64},
    {"2002::/16", AddressRange::kPublic, Embedding::kSixToFour, 2},
    {"2001::/32", AddressRange::kTeredo},
    {"2001:2::/48", AddressRange::kBenchmarking},
    {"2001:db8::/32", AddressRange::kDocumentation},
    {"3fff::/20", AddressRange::kDocumentation},
    {"fc00::/7", AddressRange::kPrivate},
    {"fe80::/10", AddressRange::kLinkLocal},
    {"fec0::/10", AddressRange::kSiteLocal},
    {"ff00::/8", AddressRange::kMulticast},
    // Outside 2000::/3, what the rows above leave.
    {"::/8", AddressRange::kReserved},
    {"100::/8", AddressRange::kReserved},
    {"200::/7", AddressRange::kReserved},
    {"400::/6", AddressRange::kReserved},
    {"800::/5", AddressRange::kReserved},
    {"1000::/4", AddressRange::kReserved},
    {"4000::/2", AddressRange::kReserved},
    {"8000::/2", AddressRange::kReserved},
    {"c000::/3", AddressRange::kReserved},
    {"e000::/4", AddressRange::kReserved},
    {"f000::/5", AddressRange::kReserved},
    {"f800::/6", AddressRange::kReserved},
    {"fe00::/9", AddressRange::kReserved},
};

struct Row {
  Cidr block;
  AddressRange range;
  Embedding embedding;
  size_t ipv4_at;
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = [] {
    std::vector<Row> parsed;
    for (const RowText& text : kRows) {
      Result<Cidr> block = ParseCidr(text.block);
      CORRAL_INVARIANT(block.ok(), "a special range row does not parse");
      // Should a row ever fail to parse, it takes its whole family: closed, not open.
      Address family_zero = text.block.find(':') == std::string_view::npos ? Address::Ipv4({}) : Address::Ipv6({});
      Cidr taken = block.ok() ? *block : Cidr{family_zero, 0};
      parsed.push_back(Row{taken, text.range, text.embedding, text.ipv4_at});
    }
    return parsed;
  }();
  return rows;
}

// Whether a row's addresses are refused even under --allow-private: an
// unspecified address (0.0.0.0/8, ::) is one Linux connects to this host by.
bool RefusedOutright(AddressRange range) {
  return range == AddressRange::kTeredo || range == AddressRange::kUnreadNat64 ||
         (range == AddressRange::kUnspecified && !MutantActive(Mutant::kEgressUnspecified));
}

const Row* FirstRowContaining(const Address& address) {
  for (const Row& row : Rows()) {
    if (row.block.Contains(address)) return &row;
  }
  return nullptr;
}

// The IPv4 address in `address` where `row` (one that carries IPv4) puts it.
Address CarriedAt(const Address& address, const Row& row) {
  std::span<const uint8_t> bytes = address.bytes().subspan(row.ipv4_at, 4);
  return Address::Ipv4({bytes[0], bytes[1], bytes[2], bytes[3]});
}

std::string_view RangePhrase(AddressRange range) {
  switch (range) {
    case AddressRange::kPublic: return "a public address";
    case AddressRange::kUnspecified: return "an unspecified address";
    case AddressRange::kLoopback: return "a loopback address";
    case AddressRange::kPrivate: return "a private address";
    case AddressRange::kLinkLocal: return "a link-local address";
    case AddressRange::kSharedAddressSpace: return "a shared (carrier-grade NAT) address";
    case AddressRange::kMulticast: return "a multicast address";
    case AddressRange::kReserved: return "a reserved address";
    case AddressRange::kCloudMetadata: return "the cloud metadata address";
    case AddressRange::kBenchmarking: return "a benchmarking address";
    case AddressRange::kDocumentation: return "a documentation address";
    case AddressRange::kProtocolAssignments: return "an IETF protocol assignments address";
    case AddressRange::kSiteLocal: return "a site-local address";
    case AddressRange::kTeredo: return "a Teredo address";
    case AddressRange::kUnreadNat64: return "a local-use NAT64 address outside the /96 layout corral reads";
  }
  return "a reserved address";
}

Error NotAllowed(std::string_view text, const std::string& why) {
  return Error(ErrorKind::kUsage, "--allow-private " + PrintableText(text) + ": " + why);
}

}  // namespace

std::string_view EmbeddingName(Embedding embedding) {
  switch (embedding) {
    case Embedding::kNone: return "";
    case Embedding::kIpv4Mapped: return "IPv4-mapped";
    case Embedding::kIpv4Compatible: return "IPv4-compatible";
    case Embedding::kNat64: return "NAT64";
    case Embedding::kSixToFour: return "6to4";
  }
  return "";
}

std::vector<CarriedRange> CarriedIpv4Ranges(const Cidr& range) {
  std::vector<CarriedRange> carried;
  for (const Row& row : Rows()) {
    bool unread = row.range == AddressRange::kUnreadNat64;
    if (row.embedding == Embedding::kNone && !unread) continue;
    if (!row.block.Covers(range) && !range.Covers(row.block)) continue;
    if (unread) {
      carried.push_back(CarriedRange{Embedding::kNat64, row.block, 0, std::nullopt});
      continue;
    }
    // The range's bits from where the IPv4 address starts are its prefix (none
    // when the range covers the row); the base is zero past the range's prefix.
    int ipv4_bits = static_cast<int>(row.ipv4_at) * 8;
    int length = std::clamp(range.prefix_length - ipv4_bits, 0, 32);
    carried.push_back(CarriedRange{row.embedding, row.block, ipv4_bits, Cidr{CarriedAt(range.base, row), length}});
  }
  return carried;
}

Classification ClassifyAddress(const Address& address) {
  Classification classification{AddressRange::kPublic, HostRange(address), Embedding::kNone, std::nullopt};
  const Row* row = FirstRowContaining(address);
  if (row == nullptr) return classification;
  if (row->embedding == Embedding::kNone) {
    classification.range = row->range;
    classification.block = row->block;
    return classification;
  }
  Address carried = CarriedAt(address, *row);
  const Row* inner = FirstRowContaining(carried);
  classification.range = inner == nullptr ? AddressRange::kPublic : inner->range;
  classification.block = inner == nullptr ? HostRange(carried) : inner->block;
  classification.embedding = row->embedding;
  classification.embedded = carried;
  return classification;
}

std::string DescribeClassification(const Address& address, const Classification& classification) {
  std::string out = address.ToString();
  if (classification.embedded) {
    out += " carries " + classification.embedded->ToString() + " (" +
           std::string(EmbeddingName(classification.embedding)) + "), ";
  } else {
    out += " is ";
  }
  out += RangePhrase(classification.range);
  if (classification.range != AddressRange::kCloudMetadata && classification.range != AddressRange::kPublic) {
    out += " (" + classification.block.ToString() + ")";
  }
  if (RefusedOutright(classification.range)) out += ", refused outright";
  return out;
}

Result<Cidr> ParseAllowedPrivateRange(std::string_view text) {
  Result<Cidr> range = ParseCidr(text);
  if (!range.ok()) return NotAllowed(text, range.error().message());
  for (const Row& row : Rows()) {
    if (!row.block.Covers(*range)) continue;
    if (row.embedding != Embedding::kNone) {
      return NotAllowed(text, "its addresses carry IPv4 addresses (" + std::string(EmbeddingName(row.embedding)) +
                                  ") and are judged by them; allow the IPv4 range instead");
    }
    if (RefusedOutright(row.range)) {
      return NotAllowed(text, "it lies in " + row.block.ToString() + " (" + std::string(RangePhrase(row.range)) +
                                  "), refused outright");
    }
    return *range;
  }
  return NotAllowed(text, range->ToString() +
                              " is not inside one private or other special range: it would reach public addresses, "
                              "which need no --allow-private");
}

Result<void> CheckDestination(const Address& address, std::span<const Cidr> allowed_private_ranges) {
  Classification classification = ClassifyAddress(address);
  if (classification.range == AddressRange::kPublic) return Ok();
  std::string refusal = "destination " + DescribeClassification(address, classification);
  if (RefusedOutright(classification.range)) return Error(ErrorKind::kDenied, refusal);
  Address judged = classification.embedded.value_or(address);
  bool metadata = classification.range == AddressRange::kCloudMetadata;
  for (const Cidr& allowed : allowed_private_ranges) {
    if (metadata ? allowed == HostRange(judged) : allowed.Contains(judged)) return Ok();
  }
  if (metadata) {
    refusal += "; refused even under --allow-private unless it names " + HostRange(judged).ToString() + " alone";
  } else {
    refusal += "; --allow-private " + HostRange(judged).ToString() + " would let it through";
  }
  return Error(ErrorKind::kDenied, refusal);
}

}  // namespace corral
