#include "cmd/liteop/liteop.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "cmd/liteop/liteop_internal.h"
#include "common/cli/cli.h"
#include "common/cli/json.h"
#include "common/names/names.h"
#include "common/pattern/pattern.h"
#include "common/status/macros.h"
#include "common/units/units.h"

namespace lite::liteop {

// One result: "key=value key=value" (a bool as yes/no, empty strings left
// out), or with -o json one JSON object on one line.
void PrintRecord(const cli::Args& a, const cli::Json& record) {
  if (a.output() == cli::Output::kJson) {
    a.out() << cli::JsonLine(record) << "\n";
    return;
  }
  std::string line;
  for (const auto& [key, value] : record.items()) {
    // An empty string (a node without a name) is left out of the line.
    if (value.is_string() && value.get<std::string>().empty()) continue;
    if (!line.empty()) line.push_back(' ');
    std::string shown;
    if (value.is_string()) {
      shown = value.get<std::string>();
    } else if (value.is_boolean()) {
      shown = value.get<bool>() ? "yes" : "no";
    } else {
      shown = value.dump();
    }
    absl::StrAppend(&line, key, "=", shown);
  }
  a.out() << line << "\n";
}

namespace {

using cli::Json;

// At most this many bytes move in one run (a buffer of it is allocated).
constexpr uint64_t kMaxLength = uint64_t{4} << 30;

const cli::Flag kAccess{
    .name = "access",
    .value = "r|w|rw",
    .help =
        "access of the map (default: what the command needs; e.g. r to "
        "see a write fail with EACCES)"};
const cli::Flag kHold{.name = "hold",
                      .value = "SECONDS",
                      .help =
                          "keep the mapping(s) open this long after the "
                          "command (0: until killed); for sharing tests"};
const cli::Flag kChunk{.name = "chunk",
                       .value = "SIZE",
                       .help = "move at most SIZE bytes per operation"};
const cli::Flag kPattern{
    .name = "pattern",
    .value = "SEED",
    .help = "the test pattern from SEED (a number; see below)"};
const cli::Flag kLength{.name = "length",
                        .value = "N",
                        .help = "bytes of the pattern (at most 4G)"};
const cli::Flag kData{
    .name = "data", .value = "STRING", .help = "these bytes (not empty)"};

std::string FnvHex(uint64_t hash) { return absl::StrFormat("%016x", hash); }

const char* AccessName(uint32_t access) {
  switch (access) {
    case lite::kRead:
      return "r";
    case lite::kWrite:
      return "w";
    default:
      return "rw";
  }
}

const char* StateName(uint32_t state) {
  switch (state) {
    case LITE_PEER_CONNECTED:
      return "connected";
    case LITE_PEER_CONNECTING:
      return "connecting";
    default:
      return "unknown";
  }
}

// The name of node `id`, or "" if it has none or lite.ko cannot say (one
// that predates node names).
std::string NameOf(const lite::Lite& l, uint32_t id) {
  absl::StatusOr<std::string> name = l.NodeName(id);
  return name.ok() ? *name : "";
}

// The device, opened once the arguments are known to be good, and the
// options every LMR command shares.
class Session {
 public:
  Session(const cli::Args& args, const Opener& open)
      : args_(args), open_(open) {}

  // --access and --hold, checked before anything is opened.
  absl::Status ReadCommonFlags() {
    if (args_.Has("hold")) {
      LITE_ASSIGN_OR_RETURN(hold_, cli::Number("--hold", args_.Get("hold")));
    }
    if (args_.Has("access")) {
      const std::string a = args_.Get("access");
      if (a == "r") {
        access_ = lite::kRead;
      } else if (a == "w") {
        access_ = lite::kWrite;
      } else if (a == "rw" || a == "wr") {
        access_ = lite::kReadWrite;
      } else {
        return cli::UsageError(
            absl::StrFormat("--access must be r, w or rw, not '%s'", a));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<lite::Lite*> Lite() {
    if (!lite_) {
      LITE_ASSIGN_OR_RETURN(lite::Lite l,
                            open_(args_.Get("device", LITE_DEVICE_PATH)));
      lite_.emplace(std::move(l));
    }
    return &*lite_;
  }

  // Maps `name` with --access, else `access`.
  absl::StatusOr<lite::Lmr> Map(const std::string& name, uint32_t access) {
    LITE_ASSIGN_OR_RETURN(lite::Lite * l, Lite());
    return l->Map(name, access_ != 0 ? access_ : access);
  }

  // --hold: keep what is mapped for a while (the Lmrs live in the caller).
  void Hold() {
    if (!args_.Has("hold")) return;
    args_.out().flush();
    if (hold_ == 0) {
      for (;;) pause();
    }
    std::this_thread::sleep_for(std::chrono::seconds(hold_));
  }

 private:
  const cli::Args& args_;
  const Opener& open_;
  std::optional<lite::Lite> lite_;
  uint32_t access_ = 0;
  uint64_t hold_ = 0;
};

// The bytes --data or --pattern/--length stand for.
absl::StatusOr<std::vector<uint8_t>> Source(const cli::Args& a) {
  if (a.Has("data") == a.Has("pattern")) {
    return cli::UsageError("give --data STRING or --pattern SEED --length N");
  }
  if (a.Has("data")) {
    if (a.Has("length")) return cli::UsageError("--length goes with --pattern");
    const std::string d = a.Get("data");
    if (d.empty()) return cli::UsageError("--data is empty");
    return std::vector<uint8_t>(d.begin(), d.end());
  }
  if (!a.Has("length")) return cli::UsageError("--pattern needs --length");
  LITE_ASSIGN_OR_RETURN(uint64_t seed,
                        cli::Number("--pattern", a.Get("pattern")));
  LITE_ASSIGN_OR_RETURN(uint64_t length,
                        cli::Size("--length", a.Get("length")));
  if (length == 0) return cli::UsageError("--length: at least 1, not 0");
  if (length > kMaxLength) {
    return cli::UsageError(
        absl::StrFormat("--length: at most 4G per run, not %u", length));
  }
  std::vector<uint8_t> buf(length);
  pattern::FillPattern(seed, 0, absl::MakeSpan(buf));
  return buf;
}

// --chunk, or the whole length.
absl::StatusOr<uint64_t> Chunk(const cli::Args& a, uint64_t length) {
  if (!a.Has("chunk")) return std::max<uint64_t>(length, 1);
  LITE_ASSIGN_OR_RETURN(uint64_t c, cli::Size("--chunk", a.Get("chunk")));
  if (c == 0) return cli::UsageError("--chunk: at least 1, not 0");
  return c;
}

// Reads [offset, offset + buf.size()) in chunks into buf.
absl::Status ReadAll(const lite::Lmr& lmr, uint64_t offset, uint64_t chunk,
                     std::vector<uint8_t>& buf) {
  for (uint64_t done = 0; done < buf.size(); done += chunk) {
    const uint64_t n = std::min<uint64_t>(chunk, buf.size() - done);
    LITE_RETURN_IF_ERROR(
        lmr.Read(offset + done, absl::MakeSpan(buf.data() + done, n)));
  }
  return absl::OkStatus();
}

absl::Status Node(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_ASSIGN_OR_RETURN(lite::Lite * l, s.Lite());
  LITE_ASSIGN_OR_RETURN(lite::NodeInfo n, l->Node());
  // Names first, where the nodes have them (this node's before it is set
  // up has none).
  const std::string self = n.node_id != 0 ? NameOf(*l, n.node_id) : "";
  if (a.output() == cli::Output::kJson) {
    Json members = Json::array();
    for (const lite::Member& m : n.members) {
      members.push_back({{"name", NameOf(*l, m.node_id)},
                         {"node_id", m.node_id},
                         {"incarnation", m.incarnation},
                         {"state", StateName(m.state)}});
    }
    PrintRecord(a, {{"name", self},
                    {"node_id", n.node_id},
                    {"incarnation", n.incarnation},
                    {"members", std::move(members)}});
    return absl::OkStatus();
  }
  PrintRecord(a, {{"name", self},
                  {"node_id", n.node_id},
                  {"incarnation", n.incarnation},
                  {"members", n.members.size()}});
  for (const lite::Member& m : n.members) {
    a.out() << "member ";
    PrintRecord(a, {{"name", NameOf(*l, m.node_id)},
                    {"node_id", m.node_id},
                    {"incarnation", m.incarnation},
                    {"state", StateName(m.state)}});
  }
  return absl::OkStatus();
}

absl::Status Alloc(const cli::Args& a, const Opener& open) {
  const std::string& name = a.positional()[0];
  // A bad name is bad input: said before the device is opened, as lite.ko
  // and the manager would say it.
  if (absl::Status s = names::ValidateLmrName("NAME", name); !s.ok()) {
    return cli::UsageError(s.message());
  }
  LITE_ASSIGN_OR_RETURN(uint64_t size, cli::Size("SIZE", a.positional()[1]));
  LITE_ASSIGN_OR_RETURN(cli::NodeRef home,
                        cli::ParseNode("--home", a.Get("home", "0")));
  LITE_ASSIGN_OR_RETURN(uint32_t mode,
                        cli::Mode("--mode", a.Get("mode", "0600")));
  Session s(a, open);
  LITE_ASSIGN_OR_RETURN(lite::Lite * l, s.Lite());
  if (!home.name.empty()) {
    LITE_ASSIGN_OR_RETURN(home.id, l->NodeId(home.name));
  }
  LITE_ASSIGN_OR_RETURN(
      uint64_t id,
      l->Alloc(name, size, {.mode = mode, .home_node_id = home.id}));
  PrintRecord(a, {{"lmr_id", id}, {"name", name}, {"size", size}});
  return absl::OkStatus();
}

absl::Status Free(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_ASSIGN_OR_RETURN(lite::Lite * l, s.Lite());
  LITE_RETURN_IF_ERROR(l->Free(a.positional()[0]));
  if (a.output() == cli::Output::kJson) {
    PrintRecord(a, {{"freed", a.positional()[0]}});
  } else {
    a.out() << "freed " << a.positional()[0] << "\n";
  }
  return absl::OkStatus();
}

absl::Status Map(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr,
                        s.Map(a.positional()[0], lite::kReadWrite));
  LITE_ASSIGN_OR_RETURN(lite::Lite * l, s.Lite());
  PrintRecord(a, {{"handle", lmr.handle()},
                  {"lmr_id", lmr.lmr_id()},
                  {"size", lmr.size()},
                  {"home_name", NameOf(*l, lmr.home_node_id())},
                  {"home", lmr.home_node_id()},
                  {"access", AccessName(lmr.access())}});
  s.Hold();
  return absl::OkStatus();
}

absl::Status Checksum(const cli::Args& a, const Opener&) {
  LITE_ASSIGN_OR_RETURN(std::vector<uint8_t> buf, Source(a));
  PrintRecord(
      a, {{"length", buf.size()}, {"fnv1a64", FnvHex(pattern::Fnv1a64(buf))}});
  return absl::OkStatus();
}

absl::Status Write(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  LITE_ASSIGN_OR_RETURN(uint64_t offset,
                        cli::Size("OFFSET", a.positional()[1]));
  LITE_ASSIGN_OR_RETURN(std::vector<uint8_t> buf, Source(a));
  LITE_ASSIGN_OR_RETURN(uint64_t chunk, Chunk(a, buf.size()));
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, s.Map(a.positional()[0], lite::kWrite));
  for (uint64_t done = 0; done < buf.size(); done += chunk) {
    const uint64_t n = std::min<uint64_t>(chunk, buf.size() - done);
    LITE_RETURN_IF_ERROR(
        lmr.Write(offset + done, absl::MakeConstSpan(buf.data() + done, n)));
  }
  PrintRecord(a, {{"wrote", buf.size()},
                  {"offset", offset},
                  {"fnv1a64", FnvHex(pattern::Fnv1a64(buf))}});
  s.Hold();
  return absl::OkStatus();
}

void PrintHex(const cli::Args& a, uint64_t offset,
              const std::vector<uint8_t>& buf) {
  for (uint64_t i = 0; i < buf.size(); i += 16) {
    std::string line = absl::StrFormat("%08x ", offset + i);
    std::string text;
    for (uint64_t j = i; j < i + 16 && j < buf.size(); ++j) {
      absl::StrAppendFormat(&line, " %02x", buf[j]);
      text.push_back(buf[j] >= 0x20 && buf[j] < 0x7f ? buf[j] : '.');
    }
    a.out() << absl::StrFormat("%-57s |%s|\n", line, text);
  }
}

absl::Status Read(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  LITE_ASSIGN_OR_RETURN(uint64_t offset,
                        cli::Size("OFFSET", a.positional()[1]));
  LITE_ASSIGN_OR_RETURN(uint64_t length,
                        cli::Size("LENGTH", a.positional()[2]));
  if (a.Has("hex") && a.Has("checksum")) {
    return cli::UsageError("--hex or --checksum, not both");
  }
  if (length == 0) return cli::UsageError("LENGTH: at least 1, not 0");
  if (length > kMaxLength) {
    return cli::UsageError(
        absl::StrFormat("LENGTH: at most 4G per run, not %u", length));
  }
  const bool raw = !a.Has("hex") && !a.Has("checksum");
  if (raw && a.output() == cli::Output::kJson) {
    return cli::UsageError(
        "-o json: raw bytes have no JSON form (add --checksum or --hex)");
  }
  LITE_ASSIGN_OR_RETURN(uint64_t chunk, Chunk(a, length));
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, s.Map(a.positional()[0], lite::kRead));
  std::vector<uint8_t> buf(length);
  LITE_RETURN_IF_ERROR(ReadAll(lmr, offset, chunk, buf));
  if (a.Has("checksum")) {
    PrintRecord(
        a, {{"length", length}, {"fnv1a64", FnvHex(pattern::Fnv1a64(buf))}});
  } else if (a.Has("hex") && a.output() == cli::Output::kJson) {
    std::string hex;
    for (uint8_t b : buf) absl::StrAppendFormat(&hex, "%02x", b);
    PrintRecord(a, {{"offset", offset}, {"length", length}, {"hex", hex}});
  } else if (a.Has("hex")) {
    PrintHex(a, offset, buf);
  } else {
    a.out().write(reinterpret_cast<const char*>(buf.data()), buf.size());
    if (!a.out().good()) {
      return absl::DataLossError("writing to stdout failed");
    }
  }
  s.Hold();
  return absl::OkStatus();
}

absl::Status Verify(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  if (!a.Has("pattern")) {
    return cli::UsageError("verify needs --pattern SEED --length N");
  }
  const std::string& name = a.positional()[0];
  LITE_ASSIGN_OR_RETURN(uint64_t offset,
                        cli::Size("OFFSET", a.positional()[1]));
  LITE_ASSIGN_OR_RETURN(std::vector<uint8_t> want, Source(a));
  LITE_ASSIGN_OR_RETURN(uint64_t chunk, Chunk(a, want.size()));
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, s.Map(name, lite::kRead));
  std::vector<uint8_t> got(want.size());
  LITE_RETURN_IF_ERROR(ReadAll(lmr, offset, chunk, got));
  auto diff = std::mismatch(got.begin(), got.end(), want.begin());
  if (diff.first != got.end()) {
    const uint64_t at = diff.first - got.begin();
    uint64_t bad = 0;
    for (uint64_t i = at; i < got.size(); ++i) bad += got[i] != want[i];
    return absl::DataLossError(absl::StrFormat(
        "verify %s: %u of %u bytes differ; the first at offset %u (got "
        "0x%02x, want 0x%02x)",
        name, bad, got.size(), offset + at, *diff.first, *diff.second));
  }
  PrintRecord(a, {{"verified", got.size()},
                  {"offset", offset},
                  {"fnv1a64", FnvHex(pattern::Fnv1a64(got))}});
  s.Hold();
  return absl::OkStatus();
}

absl::Status Memset(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  LITE_ASSIGN_OR_RETURN(uint64_t offset,
                        cli::Size("OFFSET", a.positional()[1]));
  LITE_ASSIGN_OR_RETURN(uint64_t length,
                        cli::Size("LENGTH", a.positional()[2]));
  absl::StatusOr<uint64_t> value = units::ParseNumber(a.positional()[3], 255);
  if (!value.ok()) {
    return cli::UsageError(
        absl::StrFormat("VALUE must be 0..255, not '%s'", a.positional()[3]));
  }
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, s.Map(a.positional()[0], lite::kWrite));
  LITE_RETURN_IF_ERROR(
      lmr.Memset(offset, static_cast<uint8_t>(*value), length));
  PrintRecord(a, {{"set", length}, {"offset", offset}, {"value", *value}});
  s.Hold();
  return absl::OkStatus();
}

absl::Status Memcpy(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  const auto& pos = a.positional();
  LITE_ASSIGN_OR_RETURN(uint64_t dst_off, cli::Size("DST_OFFSET", pos[1]));
  LITE_ASSIGN_OR_RETURN(uint64_t src_off, cli::Size("SRC_OFFSET", pos[3]));
  LITE_ASSIGN_OR_RETURN(uint64_t length, cli::Size("LENGTH", pos[4]));
  LITE_ASSIGN_OR_RETURN(lite::Lmr dst, s.Map(pos[0], lite::kWrite));
  LITE_ASSIGN_OR_RETURN(lite::Lmr src, s.Map(pos[2], lite::kRead));
  LITE_RETURN_IF_ERROR(dst.CopyFrom(dst_off, src, src_off, length));
  PrintRecord(a, {{"copied", length}});
  s.Hold();
  return absl::OkStatus();
}

absl::Status Faa(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  const std::string& name = a.positional()[0];
  LITE_ASSIGN_OR_RETURN(uint64_t offset,
                        cli::Size("OFFSET", a.positional()[1]));
  LITE_ASSIGN_OR_RETURN(uint64_t add, cli::Number("ADD", a.positional()[2]));
  LITE_ASSIGN_OR_RETURN(uint64_t threads,
                        cli::Number("--threads", a.Get("threads", "1")));
  LITE_ASSIGN_OR_RETURN(uint64_t count,
                        cli::Number("--count", a.Get("count", "1")));
  if (threads < 1 || threads > 256) {
    return cli::UsageError(
        absl::StrFormat("--threads: 1..256, not %u", threads));
  }
  if (count < 1 || count > (16u << 20) || threads * count > (16u << 20)) {
    return cli::UsageError(absl::StrFormat(
        "--count: at least 1, and threads x count at most 16M, not %u x %u",
        threads, count));
  }
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, s.Map(name, lite::kReadWrite));
  if (threads == 1 && count == 1) {
    LITE_ASSIGN_OR_RETURN(uint64_t old, lmr.FetchAdd(offset, add));
    PrintRecord(a, {{"old", old}, {"new", old + add}});
    s.Hold();
    return absl::OkStatus();
  }
  // T threads x C adds; every old value is kept to check atomicity.
  std::vector<uint64_t> olds(threads * count);
  std::vector<absl::Status> errors(threads);
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (uint64_t i = 0; i < count; ++i) {
        absl::StatusOr<uint64_t> old = lmr.FetchAdd(offset, add);
        if (!old.ok()) {
          errors[t] = old.status();
          return;
        }
        olds[t * count + i] = *old;
      }
    });
  }
  for (auto& w : workers) w.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for (const absl::Status& e : errors) LITE_RETURN_IF_ERROR(e);
  LITE_ASSIGN_OR_RETURN(uint64_t final_value, lmr.FetchAdd(offset, 0));
  std::sort(olds.begin(), olds.end());
  const bool distinct =
      std::adjacent_find(olds.begin(), olds.end()) == olds.end();
  PrintRecord(a,
              {{"threads", threads},
               {"count", count},
               {"add", add},
               {"final", final_value},
               {"min_old", olds.front()},
               {"distinct_olds", distinct},
               {"ops_per_s", static_cast<uint64_t>(threads * count / secs)}});
  if (add != 0 && !distinct) {
    return absl::DataLossError(absl::StrFormat(
        "faa %s: two adds saw the same old value: the adds were not atomic",
        name));
  }
  s.Hold();
  return absl::OkStatus();
}

absl::Status Cas(const cli::Args& a, const Opener& open) {
  Session s(a, open);
  LITE_RETURN_IF_ERROR(s.ReadCommonFlags());
  const auto& pos = a.positional();
  LITE_ASSIGN_OR_RETURN(uint64_t offset, cli::Size("OFFSET", pos[1]));
  LITE_ASSIGN_OR_RETURN(uint64_t expected, cli::Number("EXPECTED", pos[2]));
  LITE_ASSIGN_OR_RETURN(uint64_t desired, cli::Number("DESIRED", pos[3]));
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, s.Map(pos[0], lite::kReadWrite));
  LITE_ASSIGN_OR_RETURN(uint64_t old,
                        lmr.CompareSwap(offset, expected, desired));
  PrintRecord(a, {{"old", old}, {"swapped", old == expected}});
  s.Hold();
  return absl::OkStatus();
}

constexpr char kDetails[] =
    "Commands that act on an LMR map it by name first, with --access "
    "(default: what the command needs), and unmap it when done. Sizes, "
    "offsets and lengths take K, M, G, T suffixes (powers of 1024, any "
    "case, optionally with B or iB) or 0x hex; other numbers are decimal or "
    "0x hex.";

constexpr char kFooter[] =
    "Output is key=value lines; with -o json one JSON object per line (the\n"
    "same keys; 64-bit values such as lmr_id as JSON numbers, not strings\n"
    "as in litectl; yes/no as true/false).\n"
    "\n"
    "Exit status: 0 success; 1 a LITE call failed, with\n"
    "\"liteop: <call>: <strerror> (<ERRNO>): <why>\" on stderr; 2 bad usage.\n"
    "\n"
    "The pattern: byte i of the range is byte i%8 (little-endian) of\n"
    "SplitMix64(SEED + i/8); the checksum is FNV-1a 64 over the bytes.\n";

using RunFn = absl::Status (*)(const cli::Args&, const Opener&);

cli::Command Cmd(cli::Command c, RunFn fn, const Opener& open) {
  c.run = [fn, &open](const cli::Args& a) { return fn(a, open); };
  return c;
}

}  // namespace

int RunLiteop(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err, const Opener& open) {
  cli::Tool tool;
  tool.footer = kFooter;
  tool.root = {
      .name = "liteop",
      .usage = "liteop [--device PATH] COMMAND ARGS... [flags]",
      .summary = "LMR operations through libLITE (/dev/lite)",
      .details = kDetails,
      .flags = {{.name = "device",
                 .value = "PATH",
                 .help = "the LITE device (default " LITE_DEVICE_PATH ")"}},
  };
  std::vector<cli::Command>& c = tool.root.commands;
  c.push_back(Cmd(
      {.name = "node",
       .usage = "node",
       .summary = "This node's id and incarnation, and the members it knows",
       .details = "Prints name, node_id, incarnation and members, then one "
                  "'member name=NAME node_id=N incarnation=I state=S' line "
                  "per member (this node first). name= is left out for a "
                  "node without a name."},
      Node, open));
  c.push_back(Cmd(
      {.name = "alloc",
       .usage = "alloc NAME SIZE [--home NODE] [--mode 0600]",
       .summary = "Create an LMR (zeroed) on a node",
       .details = "NODE is a node name (node2) or, all digits, a node id "
                  "(3); names are looked up in lite.ko (this node and its "
                  "peers).",
       .flags = {{.name = "home",
                  .value = "NODE",
                  .help = "the node to hold its memory, by name or id "
                          "(default 0: this node)"},
                 {.name = "mode",
                  .value = "OCTAL",
                  .help = "who may map it, a subset of 0666 (default 0600)"}},
       .min_args = 2,
       .max_args = 2},
      Alloc, open));
  c.push_back(Cmd({.name = "free",
                   .usage = "free NAME",
                   .summary = "Delete an LMR (owner only); every map of it "
                              "goes ESTALE",
                   .min_args = 1,
                   .max_args = 1},
                  Free, open));
  c.push_back(Cmd({.name = "map",
                   .usage = "map NAME [--access r|w|rw] [--hold SECONDS]",
                   .summary = "Map an LMR and print its handle, lmr_id, size "
                              "and home node (home_name=, home=)",
                   .flags = {kAccess, kHold},
                   .min_args = 1,
                   .max_args = 1},
                  Map, open));
  c.push_back(Cmd(
      {.name = "write",
       .usage = "write NAME OFFSET (--data STRING | --pattern SEED --length N)"
                " [--chunk SIZE]",
       .summary = "Write bytes; prints the count and checksum",
       .flags = {kData, kPattern, kLength, kChunk, kAccess, kHold},
       .min_args = 2,
       .max_args = 2},
      Write, open));
  c.push_back(Cmd(
      {.name = "read",
       .usage = "read NAME OFFSET LENGTH [--hex | --checksum] [--chunk SIZE]",
       .summary = "Read bytes: raw to stdout (default), a hex dump, or "
                  "length=N fnv1a64=HEX",
       .flags = {{.name = "hex", .help = "a hex dump"},
                 {.name = "checksum", .help = "length and FNV-1a 64 only"},
                 kChunk,
                 kAccess,
                 kHold},
       .min_args = 3,
       .max_args = 3},
      Read, open));
  c.push_back(Cmd(
      {.name = "verify",
       .usage = "verify NAME OFFSET --pattern SEED --length N [--chunk SIZE]",
       .summary = "Read and compare with the pattern; exit 1 with the first "
                  "differing offset if they differ",
       .flags = {kPattern, kLength, kChunk, kAccess, kHold},
       .min_args = 2,
       .max_args = 2},
      Verify, open));
  c.push_back(
      Cmd({.name = "checksum",
           .usage = "checksum (--pattern SEED --length N | --data STRING)",
           .summary = "The checksum write would print (no device)",
           .flags = {kData, kPattern, kLength}},
          Checksum, open));
  c.push_back(Cmd({.name = "memset",
                   .usage = "memset NAME OFFSET LENGTH VALUE",
                   .summary = "Set LENGTH bytes to VALUE (0..255)",
                   .flags = {kAccess, kHold},
                   .min_args = 4,
                   .max_args = 4},
                  Memset, open));
  c.push_back(Cmd({.name = "memcpy",
                   .usage = "memcpy DST DST_OFFSET SRC SRC_OFFSET LENGTH",
                   .summary = "Copy within or between LMRs (SRC mapped r, "
                              "DST w)",
                   .flags = {kHold},
                   .min_args = 5,
                   .max_args = 5},
                  Memcpy, open));
  c.push_back(Cmd(
      {.name = "faa",
       .usage = "faa NAME OFFSET ADD [--threads T --count C]",
       .summary = "Fetch-and-add on the 8-byte word at OFFSET",
       .details = "With T threads x C adds each, checks that every old value "
                  "was distinct and prints the final value.",
       .flags = {{.name = "threads",
                  .value = "T",
                  .help = "threads adding at once, 1..256 (default 1)"},
                 {.name = "count",
                  .value = "C",
                  .help = "adds per thread (default 1; T x C at most 16M)"},
                 kAccess,
                 kHold},
       .min_args = 3,
       .max_args = 3},
      Faa, open));
  c.push_back(Cmd({.name = "cas",
                   .usage = "cas NAME OFFSET EXPECTED DESIRED",
                   .summary = "Compare-and-swap; prints old=V swapped=yes|no",
                   .flags = {kAccess, kHold},
                   .min_args = 4,
                   .max_args = 4},
                  Cas, open));
  AddRpcCommands(c, open);
  return cli::Run(tool, args, out, err);
}

}  // namespace lite::liteop
