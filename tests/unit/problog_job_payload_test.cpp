// What a ProbLog job carries from the queueing backend to the worker
// (core/problog/cp_payload.hpp) and reads on both sides (core/problog/problog_options.hpp):
// a ground program decodes to the one encoded and samples to the same
// counts; bytes that are not one (cut short, trailing, another format,
// offsets or query rows out of range) are refused with a reason, never
// sampled; the options reader's defaults and refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/problog/cp_payload.hpp"
#include "core/problog/problog_options.hpp"

namespace mln::problog::testing {
namespace {

// Stratum 0: 0.4::a.  0.7::b :- a.  Stratum 1: 0.5::c; 0.3::d :- \+b.
// evidence(c, false).  P(not b) = 0.72, P(c) = 0.36, P(d) = 0.216;
// P(d | not c) = 0.216 / 0.64.
CpProgram program() {
  CpProgram p;
  p.num_atoms = 4;
  p.add_rule({}, {}, {0}, {0.4});
  p.add_rule({0}, {}, {1}, {0.7});
  p.new_stratum();
  p.add_rule({}, {1}, {2, 3}, {0.5, 0.3});
  p.evidence = {2}, p.evidence_value = {0};
  p.queries = {3, 1};
  return p;
}

std::string bytes() { return encode_cp_payload(program(), {"c", "a", "e"}, {0, 1, -1}); }

// The reason decode_cp_payload gives for `b`, or "" when it decodes.
std::string refusal(const std::string& b) {
  try {
    decode_cp_payload(b);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(ProblogJobPayload, DecodesToTheProgramEncodedAndSamplesTheSame) {
  const CpPayload d = decode_cp_payload(bytes());
  const CpProgram p = program();
  EXPECT_EQ(d.cp.num_atoms, p.num_atoms);
  EXPECT_EQ(d.cp.stratum_begin, p.stratum_begin);
  EXPECT_EQ(d.cp.pos_off, p.pos_off);
  EXPECT_EQ(d.cp.head, p.head);
  EXPECT_EQ(d.cp.head_cond, p.head_cond);
  EXPECT_EQ(d.cp.evidence_value, p.evidence_value);
  EXPECT_EQ(d.query_text, (std::vector<std::string>{"c", "a", "e"}));
  EXPECT_EQ(d.query_index, (std::vector<int32_t>{0, 1, -1}));
  SampleOptions o;
  o.samples = 20000;
  const SampleResult a = forward_sample(p, o), b = forward_sample(d.cp, o);
  EXPECT_EQ(a.true_counts, b.true_counts);
  EXPECT_EQ(a.accepted, b.accepted);
  const QueryAnswer none = query_answer(b, -1), c = query_answer(b, 0);
  EXPECT_EQ(none.p, 0);
  EXPECT_EQ(none.samples, static_cast<int64_t>(b.accepted));
  EXPECT_NEAR(c.p, 0.216 / 0.64, 0.015);
  EXPECT_LE(c.lo, c.p);
  EXPECT_GE(c.hi, c.p);
}

TEST(ProblogJobPayload, AnEmptyProgramRoundTrips) {
  const CpPayload d = decode_cp_payload(encode_cp_payload(CpProgram(), {}, {}));
  EXPECT_EQ(d.cp.num_rules(), 0u);
  EXPECT_TRUE(d.query_text.empty());
}

TEST(ProblogJobPayload, RefusesBytesThatAreNotAGroundProgram) {
  const std::string b = bytes();
  EXPECT_EQ(refusal(b), "");
  EXPECT_NE(refusal(""), "");
  EXPECT_NE(refusal("not a ground program at all"), "");
  for (size_t cut : {size_t(4), size_t(20), b.size() / 2, b.size() - 1})
    EXPECT_NE(refusal(b.substr(0, cut)).find("corrupt ground program"), std::string::npos) << cut;
  EXPECT_NE(refusal(b + "x").find("bytes after its end"), std::string::npos);
  std::string order = b;
  std::swap(order[8], order[11]);  // the byte-order mark
  EXPECT_NE(refusal(order).find("byte order"), std::string::npos);
}

TEST(ProblogJobPayload, RefusesOffsetsAndQueryRowsOutOfRange) {
  CpProgram p = program();
  std::swap(p.head_off[1], p.head_off[2]);  // 1, 2 -> 2, 1: decreasing, same ends
  EXPECT_NE(refusal(encode_cp_payload(p, {}, {})).find("head offsets decrease"), std::string::npos);
  p = program();
  p.head[0] = 7;  // no such atom
  EXPECT_NE(refusal(encode_cp_payload(p, {}, {})).find("out of range"), std::string::npos);
  EXPECT_NE(refusal(encode_cp_payload(program(), {"x"}, {2})).find("query row 1 names no query atom"),
            std::string::npos);
  EXPECT_THROW(encode_cp_payload(program(), {"x"}, {}), std::invalid_argument);
}

OptionEntries entries(std::vector<OptionEntry> e) { return OptionEntries(std::move(e), "mln.f", kProblogOptions); }

// The functions' rows of the options table: every default is a value its
// own row accepts when given.
TEST(FunctionOptions, EveryDefaultIsAValidValue) {
  for (const options::Spec& s : options::kSpecs) {
    if (!(s.tasks & options::kAnyFunction) || !*s.def) continue;  // a job's row, or the caller's default
    const std::string type = s.type == options::Type::kBoolean  ? "boolean"
                             : s.type == options::Type::kChoice ? "string"
                                                                : "number";
    for (OptionFn fn : {kDatalogOptions, kProblogOptions, kRulesOptions}) {
      if (!(s.tasks & fn)) continue;
      const OptionEntries given({{s.name, type, s.def}}, "mln.f", fn), absent({}, "mln.f", fn);
      switch (s.type) {
        case options::Type::kBoolean: EXPECT_EQ(given.boolean(s.id), absent.boolean(s.id)) << s.name; break;
        case options::Type::kChoice: EXPECT_EQ(given.choice(s.id), absent.choice(s.id)) << s.name; break;
        case options::Type::kInteger: EXPECT_EQ(given.whole(s.id), absent.whole(s.id)) << s.name; break;
        case options::Type::kNumber: EXPECT_EQ(given.number(s.id), absent.number(s.id)) << s.name; break;
      }
    }
  }
  EXPECT_EQ(options::option_names(kDatalogOptions, true, true),
            "device ('auto', 'cpu' or 'gpu'), max_rows, maintain and verbose");
}

TEST(ProblogJobOptions, DefaultsAndValues) {
  const ProblogOptions d = read_problog_options(entries({}));
  EXPECT_EQ(d.sample.seed, 42u);
  EXPECT_EQ(d.device, "");
  EXPECT_FALSE(d.threads_given);
  EXPECT_EQ(d.samples_total(), d.sample.max_samples);
  const ProblogOptions o = read_problog_options(entries({{"samples", "number", "500"}, {"threads", "number", "0"},
                                                         {"device", "string", "cpu"}, {"delta", "number", "0.05"}}));
  EXPECT_EQ(o.samples_total(), 500u);
  EXPECT_TRUE(o.threads_given);
  EXPECT_EQ(o.device, "cpu");
  EXPECT_EQ(o.sample.delta, 0.05);
}

TEST(ProblogJobOptions, RefusalsNameTheOptionAndTheFunction) {
  auto why = [](std::vector<OptionEntry> e) {
    try {
      read_problog_options(entries(std::move(e)));
      return std::string();
    } catch (const OptionEntryError& x) {
      return std::string(x.what());
    }
  };
  EXPECT_EQ(why({{"delta", "number", "1"}}),
            "option \"delta\" of mln.f must be a number in (0, 1): the width of the 95% interval the stopping rule reaches");
  EXPECT_EQ(why({{"sample", "number", "1"}}), "unknown option \"sample\" of mln.f");
  EXPECT_EQ(why({{"device", "string", "tpu"}}).rfind("option \"device\" of mln.f must be", 0), 0u);
  EXPECT_EQ(why({{"max_samples", "number", "0"}}), "option \"max_samples\" of mln.f must be a whole number >= 1");
}

TEST(ProblogJobOptions, SamplerDevice) {
  EXPECT_EQ(sampler_device("cpu"), "cpu");
  EXPECT_EQ(sampler_device("auto"), cuda_sampler_available() ? "gpu" : "cpu");
  if (!cuda_sampler_available()) EXPECT_THROW(sampler_device("gpu"), std::runtime_error);
}

}  // namespace
}  // namespace mln::problog::testing
