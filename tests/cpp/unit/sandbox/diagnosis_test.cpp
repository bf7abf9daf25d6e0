// Turning bubblewrap's failure messages into causes a user can act on: the
// commonest sandbox failures in the field, each with its remedy.
#include "sandbox/diagnosis.h"

#include <gtest/gtest.h>

namespace o4s::sandbox {
namespace {

HostFacts plain_host() { return HostFacts{}; }

TEST(DiagnosisTest, MissingBubblewrapSaysHowToInstallIt) {
  Diagnosis diagnosis = bwrap_missing("bwrap");
  EXPECT_EQ(diagnosis.cause, FailureCause::kBwrapMissing);
  EXPECT_EQ(cause_name(diagnosis.cause), "bwrap_missing");
  EXPECT_NE(diagnosis.message.find("bubblewrap is not installed"), std::string::npos);
  EXPECT_NE(diagnosis.message.find("apt install bubblewrap"), std::string::npos);
  EXPECT_NE(diagnosis.message.find("OPENAI4S_KERNEL_SANDBOX=off"), std::string::npos);
}

TEST(DiagnosisTest, DisabledUserNamespacesNameTheSysctl) {
  HostFacts facts;
  facts.unprivileged_userns_clone = 0;
  Diagnosis diagnosis = diagnose_bwrap_failure(
      "bwrap: No permissions to creating new namespace, likely because the kernel does not "
      "allow non-privileged user namespaces.\n",
      1, facts);
  EXPECT_EQ(diagnosis.cause, FailureCause::kUserNamespacesDisabled);
  EXPECT_NE(diagnosis.message.find("kernel.unprivileged_userns_clone=0"), std::string::npos);
  EXPECT_NE(diagnosis.message.find("(bwrap: No permissions to creating new namespace"),
            std::string::npos);

  HostFacts zero;
  zero.max_user_namespaces = 0;
  Diagnosis capped = diagnose_bwrap_failure(
      "bwrap: Creating new namespace failed: No space left on device\n", 1, zero);
  EXPECT_EQ(capped.cause, FailureCause::kUserNamespacesDisabled);
  EXPECT_NE(capped.message.find("user.max_user_namespaces=0"), std::string::npos);
}

TEST(DiagnosisTest, UbuntuAppArmorRestrictionIsRecognised) {
  HostFacts facts;
  facts.apparmor_restrict_userns = 1;
  for (const char* text : {"bwrap: setting up uid map: Permission denied\n",
                           "bwrap: Creating new namespace failed: Permission denied\n"}) {
    Diagnosis diagnosis = diagnose_bwrap_failure(text, 1, facts);
    EXPECT_EQ(diagnosis.cause, FailureCause::kAppArmorRestricted) << text;
    EXPECT_NE(diagnosis.message.find("kernel.apparmor_restrict_unprivileged_userns=1"),
              std::string::npos);
    EXPECT_NE(diagnosis.message.find("bwrap-userns-restrict"), std::string::npos);
  }
}

TEST(DiagnosisTest, NestedContainerLoopbackRefusalOffersTheRawNetworkEscape) {
  Diagnosis diagnosis = diagnose_bwrap_failure(
      "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n", 1, plain_host());
  EXPECT_EQ(diagnosis.cause, FailureCause::kLoopbackRefused);
  EXPECT_NE(diagnosis.message.find("nested containers"), std::string::npos);
  EXPECT_NE(diagnosis.message.find("OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1"), std::string::npos);
}

TEST(DiagnosisTest, ContainerRefusingMountsIsToldApartFromABareHost) {
  HostFacts container;
  container.in_container = true;
  Diagnosis inside = diagnose_bwrap_failure(
      "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n", 1, container);
  EXPECT_EQ(inside.cause, FailureCause::kContainerRefusesMounts);
  EXPECT_NE(inside.message.find("container's runtime"), std::string::npos);
  Diagnosis bare =
      diagnose_bwrap_failure("bwrap: Failed to make / slave: Permission denied\n", 1, plain_host());
  EXPECT_EQ(bare.cause, FailureCause::kContainerRefusesMounts);
  EXPECT_EQ(bare.message.find("container's runtime"), std::string::npos);
}

TEST(DiagnosisTest, AnythingElseQuotesBubblewrapAndTheExitStatus) {
  Diagnosis quoted = diagnose_bwrap_failure("noise\nbwrap: something new\n", 1, plain_host());
  EXPECT_EQ(quoted.cause, FailureCause::kOther);
  EXPECT_NE(quoted.message.find("bwrap: something new"), std::string::npos);
  Diagnosis silent = diagnose_bwrap_failure("", 42, plain_host());
  EXPECT_NE(silent.message.find("exit status 42"), std::string::npos);
  Diagnosis seccomp =
      diagnose_bwrap_failure("bwrap: prctl(PR_SET_SECCOMP): Invalid argument\n", 1, plain_host());
  EXPECT_EQ(seccomp.cause, FailureCause::kSeccompUnsupported);
}

}  // namespace
}  // namespace o4s::sandbox
