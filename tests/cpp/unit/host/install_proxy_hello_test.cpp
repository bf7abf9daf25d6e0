// The first TLS record of an install tunnel (domain fronting): hand-built
// ClientHellos, good and bad, read by the parser and judged against the
// tunnel's CONNECT host.
#include "host/install_proxy_hello.h"

#include <gtest/gtest.h>

#include "unit/host/install_proxy_hello_bytes.h"

namespace o4s::host {
namespace {

using namespace hello_bytes;

// The judgement on `record` for a tunnel to `host`: "" when admitted, else
// the parse error or the refusal.
std::string judge(const std::string& host, const std::string& record) {
  auto hello = parse_client_hello(record);
  if (!hello) return hello.error().message;
  return refuse_client_hello(host, *hello).value_or("");
}

TEST(InstallProxyHelloTest, TheRecordSizeIsKnownFromItsHeader) {
  std::string record = hello_naming("pypi.org");
  EXPECT_EQ(tls_first_record_size(record.substr(0, 3)).value(), std::nullopt);
  EXPECT_EQ(tls_first_record_size(record.substr(0, 5)).value(), record.size());
  EXPECT_EQ(tls_first_record_size("").value(), std::nullopt);
  // Not TLS at all: known from the first byte.
  EXPECT_FALSE(tls_first_record_size("G").ok());
  EXPECT_FALSE(tls_first_record_size("GET / HTTP/1.1\r\n").ok());
  // Over 2^14, or empty, or another protocol version.
  EXPECT_FALSE(tls_first_record_size(be(22, 1) + be(0x0303, 2) + be(16385, 2)).ok());
  EXPECT_TRUE(tls_first_record_size(be(22, 1) + be(0x0303, 2) + be(16384, 2)).ok());
  EXPECT_FALSE(tls_first_record_size(be(22, 1) + be(0x0303, 2) + be(0, 2)).ok());
  EXPECT_FALSE(tls_first_record_size(be(22, 1) + be(0x0203, 2) + be(10, 2)).ok());
}

TEST(InstallProxyHelloTest, TheConnectHostsOwnNameIsAdmitted) {
  EXPECT_EQ(judge("files.pythonhosted.org", hello_naming("files.pythonhosted.org")), "");
  EXPECT_EQ(judge("files.pythonhosted.org", hello_naming("Files.PythonHosted.ORG")), "");
  auto hello = parse_client_hello(hello_naming("pypi.org"));
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->server_names, std::vector<std::string>{"pypi.org"});
  EXPECT_FALSE(hello->encrypted);
}

TEST(InstallProxyHelloTest, AnotherNameOnTheSameAddressIsRefused) {
  std::string why = judge("files.pythonhosted.org", hello_naming("fronted.example.com"));
  EXPECT_NE(why.find("names another server"), std::string::npos) << why;
  EXPECT_NE(why.find("fronted.example.com"), std::string::npos) << why;
  // A trailing dot, a suffix, a prefix: each another name.
  for (const char* name : {"files.pythonhosted.org.", "files.pythonhosted.org.evil.com",
                           "evil.files.pythonhosted.org", "files.pythonhosted.or"}) {
    EXPECT_NE(judge("files.pythonhosted.org", hello_naming(name)), "") << name;
  }
  // A name with bytes a host cannot hold is shown defanged.
  why = judge("pypi.org", hello_naming(std::string("pypi.org\0\r\nx", 12)));
  EXPECT_NE(why.find("pypi.org???x"), std::string::npos) << why;
}

TEST(InstallProxyHelloTest, AMissingNameIsRefusedForANameHost) {
  EXPECT_NE(judge("pypi.org", hello_naming("")).find("names no server"), std::string::npos);
  // No extensions block at all.
  std::string bare = be(0x0303, 2) + std::string(32, 'r') + vec("", 1) + vec(be(0x1301, 2), 2) +
                     vec(std::string(1, '\0'), 1);
  EXPECT_NE(judge("pypi.org", record(be(1, 1) + vec(bare, 3))).find("names no server"),
            std::string::npos);
  // A literal address has no name to send, or sends its own text.
  EXPECT_EQ(judge("127.0.0.1", hello_naming("")), "");
  EXPECT_EQ(judge("127.0.0.1", hello_naming("127.0.0.1")), "");
  EXPECT_EQ(judge("::1", hello_naming("::1")), "");
  EXPECT_NE(judge("127.0.0.1", hello_naming("pypi.org")), "");
}

TEST(InstallProxyHelloTest, TwoNamesAreRefused) {
  auto twice = [](const std::string& extensions) {
    return record(hello_message(extensions + usual_extensions()));
  };
  // Two entries in one list, the second another site.
  std::string why = judge("pypi.org", twice(server_names({"pypi.org", "evil.com"})));
  EXPECT_NE(why.find("more than one server"), std::string::npos) << why;
  // Two server_name extensions.
  why = judge("pypi.org", twice(server_names({"pypi.org"}) + server_names({"evil.com"})));
  EXPECT_NE(why.find("an extension sent twice"), std::string::npos) << why;
  // An entry of another name type beside the host_name.
  std::string list = be(0, 1) + vec("pypi.org", 2) + be(7, 1) + vec("evil.com", 2);
  why = judge("pypi.org", twice(extension(0, vec(list, 2))));
  EXPECT_NE(why.find("more than one server"), std::string::npos) << why;
}

TEST(InstallProxyHelloTest, AnEncryptedHelloIsRefusedWhateverItsOuterName) {
  std::string ech = extension(0xfe0d, std::string(40, 'e'));
  std::string record_with_ech =
      record(hello_message(server_names({"pypi.org"}) + ech + usual_extensions()));
  std::string why = judge("pypi.org", record_with_ech);
  EXPECT_NE(why.find("ECH"), std::string::npos) << why;
  std::string esni = extension(0xffce, std::string(40, 'e'));
  EXPECT_NE(judge("pypi.org", record(hello_message(server_names({"pypi.org"}) + esni))), "");
}

TEST(InstallProxyHelloTest, TruncatedAndOverlongLengthsAreErrors) {
  std::string good = hello_naming("pypi.org");
  // Every cut of a whole record: never admitted, never a crash.
  for (std::size_t size = 0; size < good.size(); ++size) {
    EXPECT_FALSE(parse_client_hello(good.substr(0, size)).ok()) << size;
  }
  // A record with a byte more than its header says.
  EXPECT_FALSE(parse_client_hello(good + "x").ok());
  // The handshake message claims more than the record holds: a hello split
  // over records is not read.
  std::string message = hello_message(server_names({"pypi.org"}));
  std::string split = message;
  split.replace(1, 3, be(static_cast<std::uint32_t>(message.size() + 100), 3));
  std::string why = judge("pypi.org", record(split));
  EXPECT_NE(why.find("split over TLS records"), std::string::npos) << why;
  // Bytes after the hello in its record.
  EXPECT_NE(judge("pypi.org", record(message + "zz")).find("bytes after"), std::string::npos);
  // The name's length overruns its list, the list overruns its extension.
  std::string overrun = be(0, 1) + be(200, 2) + "pypi.org";
  EXPECT_FALSE(parse_client_hello(record(hello_message(extension(0, vec(overrun, 2))))).ok());
  std::string long_list = be(50, 2) + be(0, 1) + vec("pypi.org", 2);
  EXPECT_FALSE(parse_client_hello(record(hello_message(extension(0, long_list)))).ok());
  // An extension claiming past the end of the extensions block.
  std::string long_extension = be(0, 2) + be(0xffff, 2) + "abc";
  EXPECT_FALSE(parse_client_hello(record(hello_message(long_extension))).ok());
}

TEST(InstallProxyHelloTest, GarbageIsAnError) {
  EXPECT_FALSE(parse_client_hello("").ok());
  EXPECT_FALSE(parse_client_hello(std::string(300, '\x16')).ok());
  EXPECT_FALSE(parse_client_hello(record("\x02" + vec("server hello", 3))).ok());
  // Every byte value in every position of a good record: the parser only
  // ever answers (a changed byte may still leave a readable hello).
  std::string good = hello_naming("pypi.org");
  for (std::size_t at = 0; at < good.size(); ++at) {
    for (int value : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::string changed = good;
      changed[at] = static_cast<char>(value);
      auto hello = parse_client_hello(changed);
      if (hello) (void)refuse_client_hello("pypi.org", *hello);
    }
  }
}

}  // namespace
}  // namespace o4s::host
