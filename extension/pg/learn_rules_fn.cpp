// mln.learn_rules(target, positives, negatives, background, options)
// (docs/rules.md): reads the example and background tables with the
// caller's privileges (as mln.datalog reads its inputs), learns rules with
// extension/rules on the operator engine, and returns one row per rule in
// Datalog syntax, with its coverage.  Each background table is a predicate
// named by its relation's name, so the rules run as they are in
// mln.datalog over the same tables; with score 'wpll', MLN formulas with
// their weights.
#include "pg/args.hpp"
#include "pg/datalog_run.hpp"
#include "pg/engine.hpp"
#include "pg/guard.hpp"
#include "pg/json_options.hpp"
#include "pg/spi.hpp"
#include "rules/evidence_snapshot.hpp"
#include "rules/options.hpp"
#include "rules/program_task.hpp"
#include "rules/rules.hpp"

#include <algorithm>
#include <string>
#include <vector>

extern "C" {
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/errcodes.h"
#include "utils/tuplestore.h"
PG_FUNCTION_INFO_V1(mln_learn_rules);
PG_FUNCTION_INFO_V1(mln_learn_rules_from);
PG_FUNCTION_INFO_V1(mln_check_rules_job);
PG_FUNCTION_INFO_V1(mln_store_rules_input);
}

namespace mln::pg {
namespace {

namespace dl = lang::datalog;

using rules::LearnOptions;

// Options entries through the reader a rule learning job's are read by
// (rules/options.hpp), for function `fn` (named in the messages).
LearnOptions learn_options(std::vector<OptionEntry> entries, const std::string& fn = "mln.learn_rules") {
  try {
    return rules::read_options(OptionEntries(std::move(entries), fn, kRulesOptions));
  } catch (const OptionEntryError& e) {
    throw option_error(e);
  }
}

// A table named by the caller (resolved through the search_path) as a
// relation whose rows are read: all its columns.
dl::Relation table_relation(Spi& spi, const std::string& what, const std::string& name) {
  Rows r = spi.query("SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n "
                     "ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)",
                     {text_param(name)});
  if (r.size() == 0)
    throw UserError{ERRCODE_UNDEFINED_TABLE, "relation \"" + name + "\" does not exist (" + what + ")", "", ""};
  dl::Relation rel;
  rel.name = r.text(0, 1);
  rel.input = true;
  rel.source.schema = r.text(0, 0);
  rel.source.table = r.text(0, 1);
  resolve_input(spi, rel);
  return rel;
}

// Column types of the task: by SQL type (int, text), or by column name.
struct Typing {
  bool by_name = false;
  std::vector<std::string> names;
  int of(const dl::Relation& rel, int c) {
    const std::string key = by_name ? rel.source.columns[static_cast<size_t>(c)]
                                    : std::string(dl::type_name(rel.types[static_cast<size_t>(c)]));
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == key) return static_cast<int>(i);
    names.push_back(key);
    return static_cast<int>(names.size()) - 1;
  }
};

struct Learned {
  bool wpll = false;
  std::vector<rules::LearnedRule> theory;
};

// The task's refusals as SQL errors: a program without the target (or
// without examples of it) in its own words, the rest under `fn`.
UserError task_error(const rules::TaskError& e, const std::string& fn) {
  if (const auto* p = dynamic_cast<const rules::ProgramError*>(&e))
    return UserError{p->kind == rules::ProgramError::Kind::kNoPredicate ? ERRCODE_UNDEFINED_OBJECT
                                                                        : ERRCODE_INVALID_PARAMETER_VALUE,
                     p->what(), "", p->hint};
  return UserError{ERRCODE_INVALID_PARAMETER_VALUE, fn + ": " + e.what(), "", ""};
}

// The search on the engine mln.device (or the option) names, the task's
// warnings (no negative example) as WARNING, progress as NOTICE or DEBUG1,
// a cancel between depths.
void run_search(const rules::Task& task, const LearnOptions& opts, Learned& out) {
  for (const rules::Warning& w : rules::task_warnings(task))
    pg_call([&] { ereport(WARNING, (errmsg("%s", w.message.c_str()), errhint("%s", w.hint.c_str()))); });
  rules::SearchOptions so = opts.search;
  const int level = opts.verbose ? NOTICE : DEBUG1;
  so.progress = [&](int rule, int depth, int64_t cands) {
    check_interrupts();
    pg_call([&] { elog(level, "pg_mln: learn_rules rule %d depth %d: %lld candidates", rule + 1, depth, (long long)cands); });
  };
  try {
    gpu::Engine& eng = engine_for(opts.device);
    out.wpll = so.wpll;
    out.theory = so.wpll ? rules::learn_mln_rules(eng, task, so) : rules::learn_rules(eng, task, so);
  } catch (const rules::TaskError& e) {
    throw task_error(e, "mln.learn_rules");
  }
}

void learn(Spi& spi, FunctionCallInfo fcinfo, Learned& out) {
  const std::string target = text_arg(fcinfo, 0), pos_name = text_arg(fcinfo, 1);
  const bool closed_world = PG_ARGISNULL(2);  // no negatives: sampled from the closed world
  const LearnOptions opts = learn_options(option_entries(spi, PG_ARGISNULL(4) ? 0 : PG_GETARG_DATUM(4), PG_ARGISNULL(4)));
  Rows bg_names = spi.query("SELECT x FROM unnest($1::text[]) x WHERE x IS NOT NULL", {{TEXTARRAYOID, PG_GETARG_DATUM(3)}});
  dl::Relation pos = table_relation(spi, "the positive examples", pos_name);
  const dl::Relation neg = closed_world ? pos : table_relation(spi, "the negative examples", text_arg(fcinfo, 2));
  if (neg.arity != pos.arity)
    throw UserError{ERRCODE_DATATYPE_MISMATCH, "the negative examples " + source_name(neg) + " have " +
                        std::to_string(neg.arity) + " column(s), the positive ones " + std::to_string(pos.arity),
                    "", ""};
  std::vector<dl::Relation> bg;
  for (size_t i = 0; i < bg_names.size(); ++i) {
    bg.push_back(table_relation(spi, "background relation " + std::to_string(i + 1), bg_names.text(i, 0)));
    if (bg.back().name == target)
      throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "background relation " + source_name(bg.back()) +
                          " has the target's name \"" + target + "\"", "",
                      "with recursion on, the target reads what the rules derive of it"};
  }
  if (bg.empty())
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "mln.learn_rules needs at least one background relation", "", ""};
  Typing typing;
  typing.by_name = opts.link == options::RuleLink::kName;
  dl::Symbols syms;
  rules::Task task;
  task.target.name = target;
  for (int c = 0; c < pos.arity; ++c) task.target.types.push_back(typing.of(pos, c));
  for (int c = 0; !typing.by_name && c < neg.arity; ++c)  // by name, the positives' columns name the types
    if (typing.of(neg, c) != task.target.types[static_cast<size_t>(c)])
      throw UserError{ERRCODE_DATATYPE_MISMATCH, "column " + std::to_string(c + 1) +
                          " of the negative examples has another type than the positive examples'", "", ""};
  std::vector<char> is_text;
  for (const dl::Relation& rel : bg) {
    rules::Predicate p;
    p.name = rel.name;
    for (int c = 0; c < rel.arity; ++c) p.types.push_back(typing.of(rel, c));
    p.rows = read_input(spi, rel, syms);
    task.background.push_back(std::move(p));
  }
  task.pos = read_input(spi, pos, syms);
  task.type_names = typing.names;
  if (!closed_world) task.negatives_source = source_name(neg);
  task.neg = closed_world ? rules::sample_negatives(task, static_cast<size_t>(opts.negatives_per_positive) * task.pos.rows(),
                                                    static_cast<uint64_t>(opts.seed))
                          : read_input(spi, neg, syms);
  // A type's values are text when any column of that type is text.
  is_text.assign(typing.names.size(), 0);
  auto mark = [&](const dl::Relation& rel, const std::vector<int>& types) {
    for (int c = 0; c < rel.arity; ++c)
      if (rel.types[static_cast<size_t>(c)] == dl::ColType::Text) is_text[static_cast<size_t>(types[c])] = 1;
  };
  mark(pos, task.target.types);
  for (size_t i = 0; i < bg.size(); ++i) mark(bg[i], task.background[i].types);
  task.show = [&](int type, int32_t v) {
    return is_text[static_cast<size_t>(type)] ? rules::symbol_constant(syms.text(v)) : std::to_string(v);
  };
  run_search(task, opts, out);
}

// A program's evidence read over SPI (rules/program_task.hpp reads it).
class SpiEvidence : public rules::EvidenceSource {
 public:
  SpiEvidence(Spi& spi, std::string schema) : spi_(spi), schema_(std::move(schema)) {}
  gpu::HostTable atoms(const rules::DeclaredPredicate& p, bool truth) override {
    std::vector<std::string> cols;
    for (const std::string& c : p.columns) cols.push_back(qi(c));
    Rows r = spi_.query(rules::atoms_sql(qualified(schema_, p.name), cols, truth));
    gpu::HostTable t;
    t.cols.assign(cols.size(), std::vector<int32_t>(r.size()));
    for (size_t i = 0; i < r.size(); ++i) {
      if (i % 65536 == 0) check_interrupts();
      for (size_t c = 0; c < cols.size(); ++c) t.cols[c][i] = r.int4(i, static_cast<int>(c));
    }
    return t;
  }
  std::vector<std::pair<int32_t, std::string>> symbols() override {
    Rows r = spi_.query(rules::symbols_sql(qualified(schema_, "_symbols")));
    std::vector<std::pair<int32_t, std::string>> rows;
    for (size_t i = 0; i < r.size(); ++i) rows.emplace_back(r.int4(i, 0), r.text(i, 1));
    return rows;
  }

 private:
  Spi& spi_;
  std::string schema_;
};

// The program's schema and declared predicates; UserError when the
// program does not exist (or is not the caller's).
std::string program_predicates(Spi& spi, const std::string& prog, std::vector<rules::DeclaredPredicate>& preds) {
  Rows sch = spi.query("SELECT schema_name::text FROM mln.programs WHERE name = $1", {text_param(prog)});
  if (sch.size() == 0) throw UserError{ERRCODE_UNDEFINED_OBJECT, "program \"" + prog + "\" does not exist", "", ""};
  Rows r = spi.query(rules::kPredicatesSql, {text_param(prog)});
  for (size_t i = 0; i < r.size(); ++i)
    preds.push_back(rules::declared_predicate(r.text(i, 0), r.text(i, 1), r.text(i, 2), r.text(i, 3)));
  return sch.text(0, 0);
}

// A program's evidence as the task (mln.learn_rules_from), built by the
// builder the worker's rule learning jobs use.
void learn_from_program(Spi& spi, const std::string& prog, const std::string& target, const LearnOptions& opts,
                        Learned& out) {
  std::vector<rules::DeclaredPredicate> preds;
  SpiEvidence src(spi, program_predicates(spi, prog, preds));
  rules::Task task;
  try {
    task = rules::program_task(preds, prog, target, src, opts.negatives_per_positive, static_cast<uint64_t>(opts.seed));
  } catch (const rules::TaskError& e) {
    throw task_error(e, "mln.learn_rules_from");
  }
  run_search(task, opts, out);
}

// What a rule learning job is checked by when queued (the jobs trigger):
// its options as the worker will read them, the target one of the
// program's predicates, and the search's own rules for that target.
void check_rules_job(Spi& spi, const std::string& prog, Datum options) {
  Rows t = spi.query("SELECT jsonb_typeof($1->'target'), $1->>'target'", {{JSONBOID, options}});
  if (t.isnull(0, 0) || t.text(0, 0) != "string")
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "a rule learning job needs its target: option \"target\" (text)",
                    "", "queue it with mln.learn_rules_job(program, target, options)"};
  const std::string target = t.text(0, 1);
  std::vector<OptionEntry> entries = option_entries(spi, options, false);
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const OptionEntry& e) { return e.key == "target"; }),
                entries.end());
  const LearnOptions opts = learn_options(std::move(entries), "mln.learn_rules_job");
  std::vector<rules::DeclaredPredicate> preds;
  program_predicates(spi, prog, preds);
  try {
    const rules::DeclaredPredicate& decl = rules::find_target(preds, prog, target);
    rules::check_search_options(opts.search, decl.types.size());
  } catch (const rules::TaskError& e) {
    throw task_error(e, "mln.learn_rules_job");
  }
}

// A queued rules job's inputs (rules/evidence_snapshot.hpp): what the
// task's builder reads of the program's evidence, read here with the
// caller's privileges and stored as the job's rows of mln.rules_input, so
// that the worker reads no table of the program for it (issue #59).
void store_rules_input(Spi& spi, int64_t job, const std::string& prog, Datum options) {
  const std::string target = spi.query("SELECT $1->>'target'", {{JSONBOID, options}}).text(0, 0);
  std::vector<OptionEntry> entries = option_entries(spi, options, false);
  entries.erase(std::remove_if(entries.begin(), entries.end(), [](const OptionEntry& e) { return e.key == "target"; }),
                entries.end());
  const LearnOptions opts = learn_options(std::move(entries), "mln.learn_rules_job");
  std::vector<rules::DeclaredPredicate> preds;
  SpiEvidence src(spi, program_predicates(spi, prog, preds));
  rules::RecordingEvidence rec(src);
  try {
    (void)rules::program_task(preds, prog, target, rec, opts.negatives_per_positive, static_cast<uint64_t>(opts.seed));
  } catch (const rules::TaskError& e) {
    throw task_error(e, "mln.learn_rules_job");
  }
  store_job_bytes(spi, "mln.rules_input", job, rec.encode());
}

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln._store_rules_input(job bigint, program text, options jsonb) returns void
Datum mln_store_rules_input(PG_FUNCTION_ARGS) {
  MLN_GUARDED({
    Spi spi;
    store_rules_input(spi, PG_GETARG_INT64(0), text_arg(fcinfo, 1), PG_GETARG_DATUM(2));
  });
  PG_RETURN_VOID();
}

namespace {

// The rows of a theory (the static result of the guarded part); from here
// PostgreSQL may raise: nothing below owns C++ resources (the theory is
// cleared by the next call).
void return_theory(FunctionCallInfo fcinfo, Learned& learned) {
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (const mln::rules::LearnedRule& r : learned.theory) {
    Datum values[6] = {CStringGetTextDatum(r.text.c_str()), Int64GetDatum(r.on_all.pos), Int64GetDatum(r.on_all.neg),
                       Int64GetDatum(r.new_pos), Float8GetDatum(r.score), Float8GetDatum(r.weight)};
    // coverage: no weight; wpll: new positives mean nothing, and the unit clause (first) has no gain.
    const bool unit = learned.wpll && r.clause.body.empty();
    bool nulls[6] = {false, false, false, learned.wpll, unit, !learned.wpll};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  learned.theory.clear();
}

Learned learned;  // from the guarded part to the rows

}  // namespace

// mln.learn_rules(target text, positives text, negatives text, background
//   text[], options jsonb default '{}') returns table(rule text, positives
//   bigint, negatives bigint, new_positives bigint, score float8, weight float8)
Datum mln_learn_rules(PG_FUNCTION_ARGS) {
  MLN_GUARDED({
    learned.theory.clear();
    for (int i : {0, 1, 3})
      if (PG_ARGISNULL(i))
        throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED,
                        "mln.learn_rules: target, positives and background must not be null", "",
                        "negatives may be null: closed-world negatives are then sampled"};
    Spi spi;
    learn(spi, fcinfo, learned);
  });
  return_theory(fcinfo, learned);
  return (Datum)0;
}

// mln.learn_rules_from(program text, target text, options jsonb default '{}')
//   returns the same table, from the program's evidence
Datum mln_learn_rules_from(PG_FUNCTION_ARGS) {
  MLN_GUARDED({
    learned.theory.clear();
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "mln.learn_rules_from: program and target must not be null", "", ""};
    Spi spi;
    const LearnOptions opts = learn_options(option_entries(spi, PG_ARGISNULL(2) ? 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2)));
    learn_from_program(spi, text_arg(fcinfo, 0), text_arg(fcinfo, 1), opts, learned);
  });
  return_theory(fcinfo, learned);
  return (Datum)0;
}

// mln._check_rules_job(program text, options jsonb) returns void: refuses a
// rule learning job's bad options or unknown target before it is queued.
Datum mln_check_rules_job(PG_FUNCTION_ARGS) {
  MLN_GUARDED({
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "a rule learning job needs a program and options", "", ""};
    Spi spi;
    check_rules_job(spi, text_arg(fcinfo, 0), PG_GETARG_DATUM(1));
  });
  PG_RETURN_VOID();
}
