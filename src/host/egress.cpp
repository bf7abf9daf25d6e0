#include "host/egress.h"

#include <array>

#include "base/ascii.h"
#include "host/egress_policy.h"

namespace o4s::host {

namespace {

// Package indexes, code hosting, and the large public biology/chemistry
// data services an analysis commonly needs. Subdomains are included
// (www.ebi.ac.uk, eutils.ncbi.nlm.nih.gov).
constexpr std::array<std::string_view, 23> kAllowed = {"pypi.org",
                                                       "files.pythonhosted.org",
                                                       "pythonhosted.org",
                                                       "conda.anaconda.org",
                                                       "repo.anaconda.com",
                                                       "anaconda.org",
                                                       "conda-forge.org",
                                                       "cran.r-project.org",
                                                       "bioconductor.org",
                                                       "registry.npmjs.org",
                                                       "github.com",
                                                       "raw.githubusercontent.com",
                                                       "codeload.github.com",
                                                       "objects.githubusercontent.com",
                                                       "ncbi.nlm.nih.gov",
                                                       "ebi.ac.uk",
                                                       "rcsb.org",
                                                       "wwpdb.org",
                                                       "uniprot.org",
                                                       "ensembl.org",
                                                       "zenodo.org",
                                                       "figshare.com",
                                                       "huggingface.co"};

}  // namespace

bool egress_domain_allowed(std::string_view domain) {
  std::string host = ascii::lowered(domain);
  while (!host.empty() && host.back() == '.') host.pop_back();
  if (host.empty()) return false;
  const std::string_view view = host;
  for (std::string_view allowed : kAllowed) {
    if (view == allowed) return true;
    if (view.size() > allowed.size() && view.substr(view.size() - allowed.size()) == allowed &&
        view[view.size() - allowed.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

std::optional<std::string> first_blocked_domain(const std::vector<std::string>& domains,
                                                const std::vector<std::string>& also_allowed) {
  EgressPolicy policy;
  policy.extra_domains = also_allowed;
  for (const std::string& domain : domains) {
    if (!domain_basis(policy, domain)) return domain;
  }
  return std::nullopt;
}

std::string egress_block_message(std::string_view domain) {
  const std::string d(domain);
  return "proxy 403: outbound network access to '" + d +
         "' is blocked by the egress allowlist (OPENAI4S_EGRESS=allowlist). This domain is not "
         "on the science / package-index / data-repository allowlist. Call "
         "host.request_network_access(domain='" +
         d + "') to ask the user to approve widening it.";
}

bool egress_allowlist_mode(std::string_view mode) {
  return parse_egress_mode(mode) == EgressMode::kAllowlist;
}

}  // namespace o4s::host
