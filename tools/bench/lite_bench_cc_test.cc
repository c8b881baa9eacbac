// lite-bench in-process against the fake device: the JSON that
// tools/bench/compare reads, the size check before anything runs, --create
// frees what it made. lite_bench_test.sh covers the binary without lite.ko.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <sstream>
#include <vector>

#include "api/fake_device.h"
#include "common/cli/json.h"
#include "tools/bench/lite_bench.h"

namespace lite::bench {
namespace {

using ::testing::HasSubstr;

class LiteBenchTest : public ::testing::Test {
 protected:
  LiteBenchTest() {
    dev_.set_handler([this](unsigned long request, void* data) {
      switch (request) {
        case LITE_IOC_NODE:
          static_cast<struct lite_node_info*>(data)->node_id = 1;
          return 0;
        case LITE_IOC_MAP: {
          auto* m = static_cast<struct lite_map*>(data);
          m->handle = 3;
          m->size_bytes = lmr_size_;
          m->home_node_id = 2;
          m->access = LITE_ACCESS_READ | LITE_ACCESS_WRITE;
          return 0;
        }
        case LITE_IOC_ALLOC:
        case LITE_IOC_UNMAP:
        case LITE_IOC_READ:
        case LITE_IOC_WRITE:
          return 0;
        case LITE_IOC_FREE:
          ++frees_;
          return 0;
        case LITE_IOC_PRIORITY: {
          auto* a = static_cast<struct lite_priority_args*>(data);
          priorities_.push_back(a->priority);
          return a->priority == LITE_PRIO_HIGH && !high_allowed_ ? -EPERM : 0;
        }
        case LITE_IOC_FAA:
        case LITE_IOC_CAS:
          static_cast<struct lite_atomic*>(data)->result = 0;
          return 0;
        case LITE_IOC_BATCH: {
          auto* b = static_cast<struct lite_batch*>(data);
          batch_sizes_.push_back(b->count);
          auto* ops = reinterpret_cast<lite_batch_op*>(b->ops);
          for (uint32_t i = 0; i < b->count; ++i) {
            batch_offsets_.push_back(ops[i].offset);
            ops[i].error = batch_error_;
          }
          return 0;
        }
        default:
          return -ENOTTY;
      }
    });
  }

  int Run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    return RunLiteBench(args, out_, err_, [this](const std::string&) {
      lite_ctx* ctx = nullptr;
      const int e = dev_.Open(&ctx);
      if (e != 0) return absl::StatusOr<lite::Lite>(ErrnoToStatus(e, "open"));
      return absl::StatusOr<lite::Lite>(lite::Lite::Adopt(ctx));
    });
  }

  testing::FakeDevice dev_;
  uint64_t lmr_size_ = 1 << 20;
  std::atomic<int> frees_{0};
  std::vector<uint32_t> priorities_;
  bool high_allowed_ = true;
  std::vector<uint32_t> batch_sizes_;
  std::vector<uint64_t> batch_offsets_;
  int batch_error_ = 0;
  std::ostringstream out_, err_;
};

TEST_F(LiteBenchTest, JsonHasWhatCompareReads) {
  ASSERT_EQ(Run({"--lmr", "b", "--ops", "read,cas,write_bw", "--sizes", "8,4K",
                 "--iters", "5", "--warmup", "1", "--bw_seconds", "0.05",
                 "--bw_threads=2", "-o", "json"}),
            0)
      << err_.str();
  const cli::Json j = cli::Json::parse(out_.str());
  EXPECT_EQ(j["lmr"], "b");
  EXPECT_EQ(j["node"], 1);
  EXPECT_EQ(j["home_node"], 2);
  EXPECT_EQ(j["iters"], 5);
  ASSERT_EQ(j["latency"].size(), 3u);  // read 8, read 4K, cas 8
  EXPECT_EQ(j["latency"][1]["op"], "read");
  EXPECT_EQ(j["latency"][1]["size"], 4096);
  EXPECT_TRUE(j["latency"][2]["p50_us"].is_number());
  // compare's CPU and context-switch columns (getrusage, never negative).
  EXPECT_GE(j["latency"][0]["cpu_us_per_op"].get<double>(), 0);
  EXPECT_GE(j["latency"][0]["switches_per_op"].get<double>(), 0);
  ASSERT_EQ(j["bandwidth"].size(), 1u);
  EXPECT_EQ(j["bandwidth"][0]["threads"], 2);
  EXPECT_TRUE(j["bandwidth"][0]["mib_per_s"].is_number());
  EXPECT_EQ(out_.str().find('\n'), out_.str().size() - 1);  // one line
}

TEST_F(LiteBenchTest, PrioritySetsTheContextsOrSaysWhyNot) {
  ASSERT_EQ(
      Run({"--lmr", "b", "--ops", "faa", "--iters", "1", "--priority", "high"}),
      0)
      << err_.str();
  EXPECT_EQ(priorities_, std::vector<uint32_t>{LITE_PRIO_HIGH});
  EXPECT_EQ(Run({"--lmr", "b", "--ops", "faa", "--iters", "1"}), 0);
  EXPECT_EQ(priorities_.size(), 1u) << "no --priority: the default, untouched";
  EXPECT_EQ(Run({"--lmr", "b", "--priority", "urgent"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--priority: high or low, not 'urgent'"));
  high_allowed_ = false;
  EXPECT_EQ(Run({"--lmr", "b", "--ops", "faa", "--priority", "high"}), 1);
  EXPECT_THAT(err_.str(), HasSubstr("CAP_SYS_NICE"));
}

TEST_F(LiteBenchTest, TooSmallIsUsageAndCreateStillFrees) {
  lmr_size_ = 4096;
  EXPECT_EQ(Run({"--create", "b", "--sizes", "64K", "--ops", "read"}), 2);
  EXPECT_THAT(err_.str(),
              HasSubstr("LMR b has 4096 bytes; these options need 65536"));
  EXPECT_EQ(frees_, 1);
  EXPECT_EQ(Run({"--create", "b", "--keep", "--ops", "faa", "--iters", "1"}), 0)
      << err_.str();
  EXPECT_EQ(frees_, 1);
  EXPECT_THAT(out_.str(), HasSubstr("LMR b (home node 2) from node 1"));
}

TEST_F(LiteBenchTest, HomeByNameAndNamesInTheOutput) {
  dev_.set_nodes({{1, "node1"}, {2, "node2"}});
  ASSERT_EQ(
      Run({"--create", "b", "--home", "node2", "--ops", "faa", "--iters", "1"}),
      0)
      << err_.str();
  EXPECT_EQ(dev_.last<struct lite_alloc>(LITE_IOC_ALLOC).home_node_id, 2u);
  EXPECT_THAT(out_.str(),
              HasSubstr("LMR b (home node node2 (2)) from node node1 (1)"));
  ASSERT_EQ(Run({"--lmr", "b", "--ops", "faa", "--iters", "1", "-o", "json"}),
            0)
      << err_.str();
  const cli::Json j = cli::Json::parse(out_.str());
  EXPECT_EQ(j["node_name"], "node1");
  EXPECT_EQ(j["home_node_name"], "node2");
  EXPECT_EQ(Run({"--create", "b", "--home", "node7"}), 1);
  EXPECT_THAT(err_.str(), HasSubstr("neither this node nor any peer is named "
                                    "\"node7\""));
}

TEST_F(LiteBenchTest, BatchedRowsRunWholeBatchesAndReportOpsPerSecond) {
  ASSERT_EQ(
      Run({"--lmr", "b", "--ops", "batch_read,batch_faa", "--sizes", "64,64K",
           "--batch", "8", "--bw_seconds", "0.02", "-o", "json"}),
      0)
      << err_.str();
  const cli::Json j = cli::Json::parse(out_.str());
  // 64K is above LITE_BATCH_RW_MAX: no batched read row for it.
  ASSERT_EQ(j["batched"].size(), 2u);
  EXPECT_EQ(j["batched"][0]["op"], "read");
  EXPECT_EQ(j["batched"][0]["size"], 64);
  EXPECT_EQ(j["batched"][0]["batch"], 8);
  EXPECT_EQ(j["batched"][1]["op"], "faa");
  EXPECT_GT(j["batched"][0]["ops_per_s"].get<double>(), 0);
  EXPECT_EQ(j["batched"][0]["ops"].get<uint64_t>() % 8, 0u);
  ASSERT_FALSE(batch_sizes_.empty());
  EXPECT_EQ(batch_sizes_[0], 8u);
  // Each entry its own bytes: offsets 0, 64, ..., 448.
  EXPECT_EQ(batch_offsets_[7], 7u * 64);
  EXPECT_EQ(Run({"--lmr", "b", "--ops", "batch_faa", "--batch", "257"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--batch: 1..256"));
  batch_error_ = -EHOSTDOWN;  // an entry's failure fails the row
  EXPECT_EQ(Run({"--lmr", "b", "--ops", "batch_faa", "--bw_seconds", "0.01"}),
            1);
  EXPECT_THAT(err_.str(), HasSubstr("batched faa"));
}

TEST_F(LiteBenchTest, FlagsAreChecked) {
  EXPECT_EQ(Run({"--lmr", "a", "--iters", "010", "--ops", "faa"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("10 timed ops per row"));
  EXPECT_EQ(Run({"--lmr", "a", "--size", "1M"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--size goes with --create"));
  EXPECT_EQ(Run({"--lmr", "a", "--bw_seconds", "nan"}), 2);
  EXPECT_EQ(Run({"--lmr", "a", "--lmr", "b"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--lmr given twice"));
}

}  // namespace
}  // namespace lite::bench
