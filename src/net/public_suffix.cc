#include "net/public_suffix.h"

#include <algorithm>
#include <iterator>

namespace corral {
namespace {

// A deliberately small subset of the Public Suffix List (see the header for
// what a suffix missing from it means). Keep it sorted.
constexpr std::string_view kCommonPublicSuffixes[] = {
    "ac.jp", "ac.uk", "amazonaws.com", "appspot.com", "azureedge.net", "azurestaticapps.net", "azurewebsites.net",
    "blob.core.windows.net", "blogspot.com", "cloudapp.net", "cloudfront.net", "cloudfunctions.net", "co.at",
    "co.id", "co.il", "co.in", "co.jp", "co.kr", "co.nz", "co.th", "co.uk", "co.za", "com.ar", "com.au", "com.br",
    "com.cn", "com.es", "com.hk", "com.mx", "com.my", "com.pl", "com.sg", "com.tr", "com.tw", "com.ua", "deno.dev",
    "edu.au", "elasticbeanstalk.com", "firebaseapp.com", "fly.dev", "github.io", "githubusercontent.com",
    "gitlab.io", "go.jp", "gov.au", "gov.uk", "gv.at", "herokuapp.com", "ltd.uk", "me.uk", "myshopify.com", "ne.jp",
    "net.au", "net.br", "net.cn", "net.in", "net.nz", "netlify.app", "ngrok-free.app", "ngrok.io", "onrender.com",
    "or.jp", "org.au", "org.br", "org.cn", "org.in", "org.nz", "org.uk", "pages.dev", "plc.uk", "r2.dev",
    "readthedocs.io", "s3.amazonaws.com", "vercel.app", "web.app", "workers.dev",
};

}  // namespace

std::span<const std::string_view> CommonPublicSuffixes() { return kCommonPublicSuffixes; }

bool IsCommonPublicSuffix(std::string_view name) {
  return std::binary_search(std::begin(kCommonPublicSuffixes), std::end(kCommonPublicSuffixes), name);
}

}  // namespace corral
