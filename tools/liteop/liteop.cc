// liteop: LMR operations from the command line, for scripts, tests and the
// demo. One command per run; commands that act on an LMR map it by name
// first (and unmap it at exit). See kUsage.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "api/lite.hpp"
#include "tools/liteop/cli_util.h"

namespace {

constexpr char kUsage[] =
    R"(usage: liteop [--device PATH] COMMAND ARGS... [OPTIONS]

LMR operations through libLITE (/dev/lite). Commands that act on an LMR map
it by name first, with --access (default: what the command needs), and
unmap it when done. Sizes, offsets and lengths take K, M, G, T suffixes
(powers of 1024) or 0x hex.

Commands:
  node                      this node's id and incarnation, and the members
                            it knows (node_id, incarnation, state)
  alloc NAME SIZE [--home N] [--mode 0600]
                            create an LMR (zeroed) on node N (0: this node)
  free NAME                 delete an LMR (owner only); every map goes ESTALE
  map NAME                  map it and print lmr_id, size, home node
  write NAME OFFSET (--data STRING | --pattern SEED --length N) [--chunk SIZE]
                            write bytes; prints the count and checksum
  read NAME OFFSET LENGTH [--hex | --checksum] [--chunk SIZE]
                            read bytes: raw to stdout (default), a hex dump,
                            or "length=N fnv1a64=HEX"
  verify NAME OFFSET --pattern SEED --length N [--chunk SIZE]
                            read and compare with the pattern; exit 1 with
                            the first differing offset if they differ
  checksum (--pattern SEED --length N | --data STRING)
                            the checksum write would print (no device)
  memset NAME OFFSET LENGTH VALUE
                            set LENGTH bytes to VALUE (0..255)
  memcpy DST DST_OFFSET SRC SRC_OFFSET LENGTH
                            copy within or between LMRs (SRC mapped r, DST w)
  faa NAME OFFSET ADD [--threads T --count C]
                            fetch-and-add on the 8-byte word at OFFSET; with
                            T threads x C adds each, checks that every old
                            value was distinct and prints the final value
  cas NAME OFFSET EXPECTED DESIRED
                            compare-and-swap; prints old=V swapped=yes|no

Options:
  --device PATH             the LITE device (default /dev/lite)
  --access r|w|rw           access of the map (e.g. r to see write fail EACCES)
  --hold SECONDS            keep the mapping(s) open this long after the
                            command (0: until killed); for sharing tests
  -h, --help                this text

Output is key=value lines. Exit status: 0 success; 1 a LITE call failed, with
"liteop: <call>: <strerror> (<ERRNO>): <why>" on stderr; 2 bad usage.
The pattern: byte i of the range is byte i%8 (little-endian) of
SplitMix64(SEED + i/8); the checksum is FNV-1a 64 over the bytes.
)";

// Exit statuses.
constexpr int kFailed = 1;
constexpr int kUsageError = 2;

struct UsageError {
  std::string message;
};

// Command-line arguments: positionals and --options, in any order.
class Args {
 public:
  static absl::StatusOr<Args> Parse(int argc, char** argv) {
    static const char* const kWithValue[] = {
        "--device",  "--access", "--hold",  "--home",    "--mode", "--data",
        "--pattern", "--length", "--chunk", "--threads", "--count"};
    static const char* const kFlags[] = {"--hex", "--checksum", "--help"};
    Args args;
    for (int i = 1; i < argc; ++i) {
      absl::string_view a = argv[i];
      if (a == "-h") a = "--help";
      if (a.size() > 2 && a.substr(0, 2) == "--") {
        std::string key(a), value;
        size_t eq = a.find('=');
        bool inline_value = eq != absl::string_view::npos;
        if (inline_value) {
          key = std::string(a.substr(0, eq));
          value = std::string(a.substr(eq + 1));
        }
        bool takes_value =
            std::find(std::begin(kWithValue), std::end(kWithValue), key) !=
            std::end(kWithValue);
        bool is_flag = std::find(std::begin(kFlags), std::end(kFlags), key) !=
                       std::end(kFlags);
        if (!takes_value && !is_flag) {
          return absl::InvalidArgumentError(
              absl::StrFormat("unknown option '%s'", key));
        }
        if (is_flag && inline_value) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s takes no value", key));
        }
        if (takes_value && !inline_value) {
          if (i + 1 >= argc) {
            return absl::InvalidArgumentError(
                absl::StrFormat("%s needs a value", key));
          }
          value = argv[++i];
        }
        if (args.options_.count(key)) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s given twice", key));
        }
        args.options_[key] = value;
        continue;
      }
      args.positional_.push_back(std::string(a));
    }
    return args;
  }

  bool Has(const std::string& key) const { return options_.count(key) > 0; }
  std::string Get(const std::string& key, std::string fallback = "") const {
    auto it = options_.find(key);
    return it == options_.end() ? fallback : it->second;
  }
  const std::vector<std::string>& positional() const { return positional_; }

  // Fails (as a usage error) on options the command does not take.
  absl::Status OnlyOptions(std::initializer_list<const char*> allowed) const {
    for (const auto& [key, value] : options_) {
      if (key == "--device" || key == "--help") continue;
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) {
            return key == a;
          }) == allowed.end()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s does not apply to '%s'", key,
                            positional_.empty() ? "" : positional_[0]));
      }
    }
    return absl::OkStatus();
  }

 private:
  std::map<std::string, std::string> options_;
  std::vector<std::string> positional_;
};

// Parse helpers that turn a bad value into a usage error naming the field.
uint64_t Size(absl::string_view what, const std::string& text) {
  absl::StatusOr<uint64_t> v = lite::cli::ParseSize(text);
  if (!v.ok()) throw UsageError{absl::StrCat(what, ": ", v.status().message())};
  return *v;
}

uint64_t Number(absl::string_view what, const std::string& text) {
  absl::StatusOr<uint64_t> v = lite::cli::ParseNumber(text);
  if (!v.ok()) throw UsageError{absl::StrCat(what, ": ", v.status().message())};
  return *v;
}

// A LITE call failed: its status text already says what, why and the errno.
int Fail(const absl::Status& status) {
  absl::FPrintF(stderr, "liteop: %s\n", status.message());
  return kFailed;
}

class Liteop {
 public:
  explicit Liteop(const Args& args) : args_(args) {}

  int Run() {
    const auto& pos = args_.positional();
    if (pos.empty()) throw UsageError{"no command (see --help)"};
    const std::string& cmd = pos[0];
    if (cmd == "checksum") return Checksum();
    // Check the command and its arguments before opening the device.
    using Handler = int (Liteop::*)();
    static const std::map<std::string, std::pair<size_t, Handler>> kCommands = {
        {"node", {1, &Liteop::Node}},     {"alloc", {3, &Liteop::Alloc}},
        {"free", {2, &Liteop::Free}},     {"map", {2, &Liteop::Map}},
        {"write", {3, &Liteop::Write}},   {"read", {4, &Liteop::Read}},
        {"verify", {3, &Liteop::Verify}}, {"memset", {5, &Liteop::Memset}},
        {"memcpy", {6, &Liteop::Memcpy}}, {"faa", {4, &Liteop::Faa}},
        {"cas", {5, &Liteop::Cas}},
    };
    auto it = kCommands.find(cmd);
    if (it == kCommands.end()) {
      throw UsageError{
          absl::StrFormat("unknown command '%s' (see --help)", cmd)};
    }
    if (pos.size() != it->second.first) {
      throw UsageError{
          absl::StrFormat("'%s' takes %d argument(s), got %d (see --help)", cmd,
                          it->second.first - 1, pos.size() - 1)};
    }
    if (args_.Has("--hold")) hold_ = Number("--hold", args_.Get("--hold"));
    if (args_.Has("--access")) {
      std::string a = args_.Get("--access");
      if (a == "r") {
        access_override_ = lite::kRead;
      } else if (a == "w") {
        access_override_ = lite::kWrite;
      } else if (a == "rw" || a == "wr") {
        access_override_ = lite::kReadWrite;
      } else {
        throw UsageError{"--access must be r, w or rw"};
      }
    }
    return (this->*(it->second.second))();
  }

 private:
  // Opens the device once the arguments are known to be good.
  absl::Status Open() {
    absl::StatusOr<lite::Lite> l =
        lite::Lite::Open(args_.Get("--device", LITE_DEVICE_PATH));
    if (!l.ok()) return l.status();
    lite_.emplace(std::move(*l));
    return absl::OkStatus();
  }

  absl::StatusOr<lite::Lmr> MapLmr(const std::string& name, uint32_t access) {
    if (!lite_) {
      if (absl::Status s = Open(); !s.ok()) return s;
    }
    return lite_->Map(name, access_override_ ? access_override_ : access);
  }

  // --hold: keep what is mapped for a while (the Lmrs live in the caller).
  void Hold() {
    if (!args_.Has("--hold")) return;
    std::fflush(stdout);
    if (hold_ == 0) {
      for (;;) pause();
    }
    std::this_thread::sleep_for(std::chrono::seconds(hold_));
  }

  int Node() {
    throw_if(args_.OnlyOptions({}));
    if (absl::Status s = Open(); !s.ok()) return Fail(s);
    absl::StatusOr<lite::NodeInfo> n = lite_->Node();
    if (!n.ok()) return Fail(n.status());
    absl::PrintF("node_id=%u incarnation=%u members=%u\n", n->node_id,
                 n->incarnation, n->members.size());
    for (const lite::Member& m : n->members) {
      absl::PrintF("member node_id=%u incarnation=%u state=%s\n", m.node_id,
                   m.incarnation,
                   m.state == LITE_PEER_CONNECTED    ? "connected"
                   : m.state == LITE_PEER_CONNECTING ? "connecting"
                                                     : "unknown");
    }
    return 0;
  }

  int Alloc() {
    throw_if(args_.OnlyOptions({"--home", "--mode"}));
    const auto& pos = args_.positional();
    uint64_t size = Size("SIZE", pos[2]);
    uint64_t home = Number("--home", args_.Get("--home", "0"));
    if (home > UINT32_MAX) throw UsageError{"--home: not a node id"};
    absl::StatusOr<uint32_t> mode =
        lite::cli::ParseMode(args_.Get("--mode", "0600"));
    if (!mode.ok()) throw UsageError{std::string(mode.status().message())};
    if (absl::Status s = Open(); !s.ok()) return Fail(s);
    absl::StatusOr<uint64_t> id = lite_->Alloc(
        pos[1], size, {.mode = *mode, .home_node_id = uint32_t(home)});
    if (!id.ok()) return Fail(id.status());
    absl::PrintF("lmr_id=%u name=%s size=%u\n", *id, pos[1], size);
    return 0;
  }

  int Free() {
    throw_if(args_.OnlyOptions({}));
    if (absl::Status s = Open(); !s.ok()) return Fail(s);
    if (absl::Status s = lite_->Free(args_.positional()[1]); !s.ok()) {
      return Fail(s);
    }
    absl::PrintF("freed %s\n", args_.positional()[1]);
    return 0;
  }

  int Map() {
    throw_if(args_.OnlyOptions({"--access", "--hold"}));
    absl::StatusOr<lite::Lmr> lmr =
        MapLmr(args_.positional()[1], lite::kReadWrite);
    if (!lmr.ok()) return Fail(lmr.status());
    absl::PrintF("handle=%u lmr_id=%u size=%u home=%u access=%s\n",
                 lmr->handle(), lmr->lmr_id(), lmr->size(), lmr->home_node_id(),
                 AccessName(lmr->access()));
    Hold();
    return 0;
  }

  // The bytes --data or --pattern/--length stand for.
  std::vector<uint8_t> Source() {
    if (args_.Has("--data") == args_.Has("--pattern")) {
      throw UsageError{"give --data STRING or --pattern SEED --length N"};
    }
    if (args_.Has("--data")) {
      if (args_.Has("--length"))
        throw UsageError{"--length goes with --pattern"};
      std::string d = args_.Get("--data");
      if (d.empty()) throw UsageError{"--data is empty"};
      return std::vector<uint8_t>(d.begin(), d.end());
    }
    if (!args_.Has("--length")) throw UsageError{"--pattern needs --length"};
    uint64_t seed = Number("--pattern", args_.Get("--pattern"));
    uint64_t length = Size("--length", args_.Get("--length"));
    if (length == 0) throw UsageError{"--length is 0"};
    if (length > (4ull << 30)) {
      throw UsageError{"--length: at most 4G per run"};
    }
    std::vector<uint8_t> buf(length);
    lite::cli::FillPattern(seed, 0, absl::MakeSpan(buf));
    return buf;
  }

  uint64_t Chunk(uint64_t length) {
    if (!args_.Has("--chunk")) return length;
    uint64_t c = Size("--chunk", args_.Get("--chunk"));
    if (c == 0) throw UsageError{"--chunk is 0"};
    return c;
  }

  int Checksum() {
    throw_if(args_.OnlyOptions({"--data", "--pattern", "--length"}));
    if (args_.positional().size() != 1) {
      throw UsageError{"'checksum' takes no arguments, only options"};
    }
    std::vector<uint8_t> buf = Source();
    absl::PrintF("length=%u fnv1a64=%016x\n", buf.size(),
                 lite::cli::Fnv1a64(buf));
    return 0;
  }

  int Write() {
    throw_if(args_.OnlyOptions(
        {"--data", "--pattern", "--length", "--chunk", "--access", "--hold"}));
    const auto& pos = args_.positional();
    uint64_t offset = Size("OFFSET", pos[2]);
    std::vector<uint8_t> buf = Source();
    uint64_t chunk = Chunk(buf.size());
    absl::StatusOr<lite::Lmr> lmr = MapLmr(pos[1], lite::kWrite);
    if (!lmr.ok()) return Fail(lmr.status());
    for (uint64_t done = 0; done < buf.size(); done += chunk) {
      uint64_t n = std::min<uint64_t>(chunk, buf.size() - done);
      absl::Status s =
          lmr->Write(offset + done, absl::MakeConstSpan(buf.data() + done, n));
      if (!s.ok()) return Fail(s);
    }
    absl::PrintF("wrote=%u offset=%u fnv1a64=%016x\n", buf.size(), offset,
                 lite::cli::Fnv1a64(buf));
    Hold();
    return 0;
  }

  // Reads [offset, offset + length) in chunks into one buffer.
  absl::Status ReadAll(const lite::Lmr& lmr, uint64_t offset,
                       std::vector<uint8_t>& buf) {
    uint64_t chunk = Chunk(buf.size());
    for (uint64_t done = 0; done < buf.size(); done += chunk) {
      uint64_t n = std::min<uint64_t>(chunk, buf.size() - done);
      absl::Status s =
          lmr.Read(offset + done, absl::MakeSpan(buf.data() + done, n));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  int Read() {
    throw_if(args_.OnlyOptions(
        {"--hex", "--checksum", "--chunk", "--access", "--hold"}));
    const auto& pos = args_.positional();
    uint64_t offset = Size("OFFSET", pos[2]);
    uint64_t length = Size("LENGTH", pos[3]);
    if (args_.Has("--hex") && args_.Has("--checksum")) {
      throw UsageError{"--hex or --checksum, not both"};
    }
    if (length == 0) throw UsageError{"LENGTH is 0"};
    if (length > (4ull << 30)) throw UsageError{"LENGTH: at most 4G per run"};
    Chunk(length);  // check it before mapping
    absl::StatusOr<lite::Lmr> lmr = MapLmr(pos[1], lite::kRead);
    if (!lmr.ok()) return Fail(lmr.status());
    std::vector<uint8_t> buf(length);
    if (absl::Status s = ReadAll(*lmr, offset, buf); !s.ok()) return Fail(s);
    if (args_.Has("--checksum")) {
      absl::PrintF("length=%u fnv1a64=%016x\n", length,
                   lite::cli::Fnv1a64(buf));
    } else if (args_.Has("--hex")) {
      for (uint64_t i = 0; i < buf.size(); i += 16) {
        std::string line = absl::StrFormat("%08x ", offset + i);
        std::string text;
        for (uint64_t j = i; j < i + 16 && j < buf.size(); ++j) {
          absl::StrAppendFormat(&line, " %02x", buf[j]);
          text.push_back(buf[j] >= 0x20 && buf[j] < 0x7f ? buf[j] : '.');
        }
        absl::PrintF("%-57s |%s|\n", line, text);
      }
    } else if (std::fwrite(buf.data(), 1, buf.size(), stdout) != buf.size()) {
      absl::FPrintF(stderr, "liteop: writing to stdout failed\n");
      return kFailed;
    }
    Hold();
    return 0;
  }

  int Verify() {
    throw_if(args_.OnlyOptions(
        {"--pattern", "--length", "--chunk", "--access", "--hold"}));
    if (args_.Has("--data") || !args_.Has("--pattern")) {
      throw UsageError{"verify needs --pattern SEED --length N"};
    }
    const auto& pos = args_.positional();
    uint64_t offset = Size("OFFSET", pos[2]);
    std::vector<uint8_t> want = Source();
    Chunk(want.size());
    absl::StatusOr<lite::Lmr> lmr = MapLmr(pos[1], lite::kRead);
    if (!lmr.ok()) return Fail(lmr.status());
    std::vector<uint8_t> got(want.size());
    if (absl::Status s = ReadAll(*lmr, offset, got); !s.ok()) return Fail(s);
    auto diff = std::mismatch(got.begin(), got.end(), want.begin());
    if (diff.first != got.end()) {
      uint64_t at = diff.first - got.begin();
      uint64_t bad = 0;
      for (uint64_t i = at; i < got.size(); ++i) bad += got[i] != want[i];
      absl::FPrintF(stderr,
                    "liteop: verify %s: %u of %u bytes differ; the first at "
                    "offset %u (got 0x%02x, want 0x%02x)\n",
                    pos[1], bad, got.size(), offset + at, *diff.first,
                    *diff.second);
      return kFailed;
    }
    absl::PrintF("verified=%u offset=%u fnv1a64=%016x\n", got.size(), offset,
                 lite::cli::Fnv1a64(got));
    Hold();
    return 0;
  }

  int Memset() {
    throw_if(args_.OnlyOptions({"--access", "--hold"}));
    const auto& pos = args_.positional();
    uint64_t offset = Size("OFFSET", pos[2]);
    uint64_t length = Size("LENGTH", pos[3]);
    uint64_t value = Number("VALUE", pos[4]);
    if (value > 255) throw UsageError{"VALUE must be 0..255"};
    absl::StatusOr<lite::Lmr> lmr = MapLmr(pos[1], lite::kWrite);
    if (!lmr.ok()) return Fail(lmr.status());
    if (absl::Status s = lmr->Memset(offset, uint8_t(value), length); !s.ok()) {
      return Fail(s);
    }
    absl::PrintF("set=%u offset=%u value=%u\n", length, offset, value);
    Hold();
    return 0;
  }

  int Memcpy() {
    throw_if(args_.OnlyOptions({"--hold"}));
    const auto& pos = args_.positional();
    uint64_t dst_off = Size("DST_OFFSET", pos[2]);
    uint64_t src_off = Size("SRC_OFFSET", pos[4]);
    uint64_t length = Size("LENGTH", pos[5]);
    absl::StatusOr<lite::Lmr> dst = MapLmr(pos[1], lite::kWrite);
    if (!dst.ok()) return Fail(dst.status());
    absl::StatusOr<lite::Lmr> src = MapLmr(pos[3], lite::kRead);
    if (!src.ok()) return Fail(src.status());
    if (absl::Status s = dst->CopyFrom(dst_off, *src, src_off, length);
        !s.ok()) {
      return Fail(s);
    }
    absl::PrintF("copied=%u\n", length);
    Hold();
    return 0;
  }

  int Faa() {
    throw_if(args_.OnlyOptions({"--threads", "--count", "--access", "--hold"}));
    const auto& pos = args_.positional();
    uint64_t offset = Size("OFFSET", pos[2]);
    uint64_t add = Number("ADD", pos[3]);
    uint64_t threads = Number("--threads", args_.Get("--threads", "1"));
    uint64_t count = Number("--count", args_.Get("--count", "1"));
    if (threads < 1 || threads > 256) throw UsageError{"--threads: 1..256"};
    if (count < 1 || threads * count > (16u << 20)) {
      throw UsageError{"--count: at least 1, and threads x count at most 16M"};
    }
    absl::StatusOr<lite::Lmr> lmr = MapLmr(pos[1], lite::kReadWrite);
    if (!lmr.ok()) return Fail(lmr.status());
    if (threads == 1 && count == 1) {
      absl::StatusOr<uint64_t> old = lmr->FetchAdd(offset, add);
      if (!old.ok()) return Fail(old.status());
      absl::PrintF("old=%u new=%u\n", *old, *old + add);
      Hold();
      return 0;
    }
    // T threads x C adds; every old value is kept to check atomicity.
    std::vector<uint64_t> olds(threads * count);
    std::vector<absl::Status> errors(threads);
    std::vector<std::thread> workers;
    auto start = std::chrono::steady_clock::now();
    for (uint64_t t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (uint64_t i = 0; i < count; ++i) {
          absl::StatusOr<uint64_t> old = lmr->FetchAdd(offset, add);
          if (!old.ok()) {
            errors[t] = old.status();
            return;
          }
          olds[t * count + i] = *old;
        }
      });
    }
    for (auto& w : workers) w.join();
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    for (const absl::Status& e : errors) {
      if (!e.ok()) return Fail(e);
    }
    absl::StatusOr<uint64_t> final_value = lmr->FetchAdd(offset, 0);
    if (!final_value.ok()) return Fail(final_value.status());
    std::sort(olds.begin(), olds.end());
    bool distinct = std::adjacent_find(olds.begin(), olds.end()) == olds.end();
    absl::PrintF(
        "threads=%u count=%u add=%u final=%u min_old=%u distinct_olds=%s "
        "ops_per_s=%.0f\n",
        threads, count, add, *final_value, olds.front(),
        distinct ? "yes" : "no", threads * count / secs);
    if (add != 0 && !distinct) {
      absl::FPrintF(stderr,
                    "liteop: faa %s: two adds saw the same old value: the "
                    "adds were not atomic\n",
                    pos[1]);
      return kFailed;
    }
    Hold();
    return 0;
  }

  int Cas() {
    throw_if(args_.OnlyOptions({"--access", "--hold"}));
    const auto& pos = args_.positional();
    uint64_t offset = Size("OFFSET", pos[2]);
    uint64_t expected = Number("EXPECTED", pos[3]);
    uint64_t desired = Number("DESIRED", pos[4]);
    absl::StatusOr<lite::Lmr> lmr = MapLmr(pos[1], lite::kReadWrite);
    if (!lmr.ok()) return Fail(lmr.status());
    absl::StatusOr<uint64_t> old = lmr->CompareSwap(offset, expected, desired);
    if (!old.ok()) return Fail(old.status());
    absl::PrintF("old=%u swapped=%s\n", *old, *old == expected ? "yes" : "no");
    Hold();
    return 0;
  }

  static const char* AccessName(uint32_t access) {
    switch (access) {
      case lite::kRead:
        return "r";
      case lite::kWrite:
        return "w";
      default:
        return "rw";
    }
  }

  static void throw_if(const absl::Status& s) {
    if (!s.ok()) throw UsageError{std::string(s.message())};
  }

  const Args& args_;
  std::optional<lite::Lite> lite_;
  uint32_t access_override_ = 0;
  uint64_t hold_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv);
  if (!args.ok()) {
    absl::FPrintF(stderr, "liteop: %s (see --help)\n", args.status().message());
    return kUsageError;
  }
  if (args->Has("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  try {
    return Liteop(*args).Run();
  } catch (const UsageError& e) {
    absl::FPrintF(stderr, "liteop: %s\n", e.message);
    return kUsageError;
  }
}
