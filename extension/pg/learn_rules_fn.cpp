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
#include "rules/rules.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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
}

namespace mln::pg {
namespace {

namespace dl = lang::datalog;

struct LearnOptions {
  std::string device;
  int64_t negatives_per_positive = 3;  // closed-world negatives when none are given
  int64_t seed = 1;
  std::string link = "type";  // columns link by SQL type, or by column name
  bool verbose = false;
  rules::SearchOptions search;
};

const char* kOptionList =
    "device, score ('coverage', 'wpll'), link ('type', 'name'), max_body, max_vars, beam, min_pos, noise, "
    "max_rules, recursion, max_constants, max_rows, min_gain, penalty, l2, negatives_per_positive, seed and verbose";

LearnOptions learn_options(Spi& spi, Datum options, bool isnull) {
  LearnOptions o;
  const JsonOptions opts(spi, options, isnull, "mln.learn_rules", kOptionList);
  const std::map<std::string, int*> ints = {{"max_body", &o.search.max_body}, {"max_vars", &o.search.max_vars},
                                            {"beam", &o.search.beam}, {"max_rules", &o.search.max_rules},
                                            {"max_constants", &o.search.max_constants}};
  const std::map<std::string, int64_t*> counts = {{"min_pos", &o.search.min_pos}, {"noise", &o.search.noise},
                                                  {"negatives_per_positive", &o.negatives_per_positive},
                                                  {"seed", &o.seed}};
  const std::map<std::string, double*> reals = {
      {"min_gain", &o.search.min_gain}, {"penalty", &o.search.penalty}, {"l2", &o.search.l2}};
  for (const JsonOptions::Entry& e : opts.entries()) {
    const int64_t min = e.key == "noise" || e.key == "max_constants" || e.key == "seed" ? 0 : 1;
    if (e.key == "device")
      o.device = opts.choice(e, {"auto", "cpu", "gpu"});
    else if (e.key == "link")
      o.link = opts.choice(e, {"type", "name"});
    else if (e.key == "score")
      o.search.wpll = opts.choice(e, {"coverage", "wpll"}) == "wpll";
    else if (e.key == "verbose")
      o.verbose = opts.boolean(e);
    else if (e.key == "recursion")
      o.search.recursion = opts.boolean(e);
    else if (e.key == "max_rows")
      o.search.max_rows = static_cast<uint64_t>(opts.whole(e, 1, INT64_MAX));
    else if (ints.count(e.key))
      *ints.at(e.key) = static_cast<int>(opts.whole(e, min, 1000000000));
    else if (counts.count(e.key))
      *counts.at(e.key) = opts.whole(e, min, INT64_MAX);
    else if (reals.count(e.key))
      *reals.at(e.key) = opts.number(e, 0);
    else
      throw opts.unknown(e);
  }
  return o;
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

std::string datalog_string(const std::string& s) {
  return s.find('"') == std::string::npos ? "\"" + s + "\"" : "'" + s + "'";
}

// The search on the engine mln.device (or the option) names, progress as
// NOTICE or DEBUG1, a cancel between depths.
void run_search(const rules::Task& task, const LearnOptions& opts, Learned& out) {
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
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, std::string("mln.learn_rules: ") + e.what(), "", ""};
  }
}

void learn(Spi& spi, FunctionCallInfo fcinfo, Learned& out) {
  const std::string target = text_arg(fcinfo, 0), pos_name = text_arg(fcinfo, 1);
  const bool closed_world = PG_ARGISNULL(2);  // no negatives: sampled from the closed world
  const LearnOptions opts = learn_options(spi, PG_ARGISNULL(4) ? 0 : PG_GETARG_DATUM(4), PG_ARGISNULL(4));
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
                      "the target reads its own positive examples when recursion is on"};
  }
  if (bg.empty())
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "mln.learn_rules needs at least one background relation", "", ""};
  Typing typing;
  typing.by_name = opts.link == "name";
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
    return is_text[static_cast<size_t>(type)] ? datalog_string(syms.text(v)) : std::to_string(v);
  };
  run_search(task, opts, out);
}

// Splits "a,b,c" (array_to_string of names that hold no comma).
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> v;
  for (size_t a = 0, b = 0; a <= s.size(); a = b + 1) {
    b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    v.push_back(s.substr(a, b - a));
  }
  return v;
}

// One predicate's atoms of one truth value from a program's evidence table.
gpu::HostTable read_atoms(Spi& spi, const std::string& table, const std::vector<std::string>& cols, bool truth) {
  std::string sel;
  for (size_t c = 0; c < cols.size(); ++c) sel += (c ? ", " : "") + qi(cols[c]);
  Rows r = spi.query("SELECT DISTINCT " + sel + " FROM " + table + " WHERE truth = " + (truth ? "true" : "false"));
  gpu::HostTable t;
  t.cols.assign(cols.size(), std::vector<int32_t>(r.size()));
  for (size_t i = 0; i < r.size(); ++i) {
    if (i % 65536 == 0) check_interrupts();
    for (size_t c = 0; c < cols.size(); ++c) t.cols[c][i] = r.int4(i, static_cast<int>(c));
  }
  return t;
}

// A program's evidence as the task (mln.learn_rules_from): the target's true
// atoms are the positives, its false ones (`!P(..)`) the negatives (or the
// closed world's, sampled, when it has none), every other predicate's true
// atoms the background; columns link by the declared argument types.
void learn_from_program(Spi& spi, const std::string& prog, const std::string& target, const LearnOptions& opts,
                        Learned& out) {
  Rows sch = spi.query("SELECT schema_name::text FROM mln.programs WHERE name = $1", {text_param(prog)});
  if (sch.size() == 0) throw UserError{ERRCODE_UNDEFINED_OBJECT, "program \"" + prog + "\" does not exist", "", ""};
  const std::string schema = sch.text(0, 0);
  Rows preds = spi.query("SELECT name, array_to_string(arg_types, ','), array_to_string(arg_kinds, ','), "
                         "array_to_string(arg_names, ',') FROM mln.predicates WHERE program = $1 ORDER BY idx",
                         {text_param(prog)});
  std::vector<std::string> type_names;
  std::vector<char> is_symbol;
  auto type_of = [&](const std::string& t, bool symbol) {
    auto it = std::find(type_names.begin(), type_names.end(), t);
    const size_t k = static_cast<size_t>(it - type_names.begin());
    if (it == type_names.end()) type_names.push_back(t), is_symbol.push_back(0);
    if (symbol) is_symbol[k] = 1;
    return static_cast<int>(k);
  };
  rules::Task task;
  bool found = false;
  for (size_t i = 0; i < preds.size(); ++i) {
    const std::string name = preds.text(i, 0);
    const std::vector<std::string> types = split_commas(preds.text(i, 1)), kinds = split_commas(preds.text(i, 2)),
                                   cols = split_commas(preds.text(i, 3));
    if (std::find(kinds.begin(), kinds.end(), "float") != kinds.end()) continue;  // not a relation of ids
    rules::Predicate p;
    p.name = name;
    for (size_t c = 0; c < types.size(); ++c) p.types.push_back(type_of(types[c], kinds[c] == "symbol"));
    const std::string table = qualified(schema, name);
    if (name != target) {
      p.rows = read_atoms(spi, table, cols, true);
      task.background.push_back(std::move(p));
      continue;
    }
    found = true;
    task.pos = read_atoms(spi, table, cols, true);
    task.neg = read_atoms(spi, table, cols, false);
    task.target = std::move(p);
  }
  if (!found)
    throw UserError{ERRCODE_UNDEFINED_OBJECT, "program \"" + prog + "\" has no predicate \"" + target + "\"", "",
                    "the target is one of the program's predicates (of integer or symbol arguments)"};
  if (task.pos.rows() == 0)
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "the evidence holds no true atom of \"" + target + "\"", "",
                    "mln.learn_rules_from learns from the evidence loaded with mln.load_evidence"};
  task.type_names = type_names;
  if (task.neg.rows() == 0)
    task.neg = rules::sample_negatives(task, static_cast<size_t>(opts.negatives_per_positive) * task.pos.rows(),
                                       static_cast<uint64_t>(opts.seed));
  std::vector<std::string> names;  // symbol ids to text, for the rules' constants
  Rows syms = spi.query("SELECT name FROM " + qualified(schema, "_symbols") + " ORDER BY id");
  for (size_t i = 0; i < syms.size(); ++i) names.push_back(syms.text(i, 0));
  task.show = [&](int type, int32_t v) {
    if (!is_symbol[static_cast<size_t>(type)]) return std::to_string(v);
    return v >= 0 && static_cast<size_t>(v) < names.size() ? datalog_string(names[static_cast<size_t>(v)])
                                                           : std::to_string(v);
  };
  run_search(task, opts, out);
}

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

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
    const LearnOptions opts = learn_options(spi, PG_ARGISNULL(2) ? 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2));
    learn_from_program(spi, text_arg(fcinfo, 0), text_arg(fcinfo, 1), opts, learned);
  });
  return_theory(fcinfo, learned);
  return (Datum)0;
}
