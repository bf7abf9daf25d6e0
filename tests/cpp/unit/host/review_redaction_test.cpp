// Review findings on the command-line redaction added for approval previews
// and the audit log (host/shell_secrets.cpp): curl takes its credentials in
// spellings the option rule did not read, and each leaked the password.
#include <gtest/gtest.h>

#include <string>

#include "host/precheck.h"

namespace o4s::host {
namespace {

TEST(ReviewRedaction, CurlUserWithAnEqualsSign) {
  EXPECT_EQ(redact_secrets("curl --user=bob:hunter2 https://x", 4000),
            "curl --user=bob:<redacted> https://x");
}

TEST(ReviewRedaction, CurlUserAttachedToTheShortOption) {
  EXPECT_EQ(redact_secrets("curl -ubob:hunter2 https://x", 4000),
            "curl -ubob:<redacted> https://x");
}

TEST(ReviewRedaction, SecretOptionValueAfterATab) {
  EXPECT_EQ(redact_secrets("mysqldump --password\thunter2 db", 4000),
            "mysqldump --password\t<redacted> db");
}

TEST(ReviewRedaction, UnchangedWhereNothingIsSecret) {
  EXPECT_EQ(redact_secrets("curl -u bob https://x --user=carol -ux", 4000),
            "curl -u bob https://x --user=carol -ux");
  EXPECT_EQ(redact_secrets("ls -la --color=auto", 4000), "ls -la --color=auto");
}

}  // namespace
}  // namespace o4s::host
