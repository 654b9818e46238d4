// mln.explain_ground(name): the operator plan of each first-order clause and
// an estimate of its ground clauses, before grounding.
//
// The plan mirrors the grounder: literals in Tuffy's FROM order (negative
// first, then positive); a literal that binds new variables is an inner join
// with its predicate's relation, a positive literal whose variables are all
// bound is an anti-join against its true-for-sure tuples.  The estimate is
// the textbook one: |R1| x ... x |Rk| / product over each join variable of
// the largest domain it connects, capped by the product of the domains of
// the clause's variables.
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/program_ctx.hpp"
#include "pg/spi.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
PG_FUNCTION_INFO_V1(mln_explain_ground);
}

namespace mln::pg {
namespace {

struct ExplainRow {
  int clause;
  std::string text;
  std::string plan;
  double estimate;
};

// Rows of each predicate's evidence relation (own table or bound relation).
std::vector<double> relation_sizes(Spi& spi, const ProgramCtx& ctx) {
  std::vector<double> n(ctx.prog.preds.size(), 0);
  for (size_t p = 0; p < ctx.prog.preds.size(); ++p) {
    const Binding& b = ctx.bindings[p];
    std::string rel = b.bound ? b.relation : qualified(ctx.schema, ctx.prog.preds[p].name);
    n[p] = static_cast<double>(spi.query("SELECT count(*) FROM " + rel).int8(0, 0));
  }
  return n;
}

// Domain size of each type: distinct symbols seen in its argument positions.
std::map<std::string, double> domain_sizes(Spi& spi, const ProgramCtx& ctx) {
  std::map<std::string, std::vector<std::string>> parts;
  for (size_t p = 0; p < ctx.prog.preds.size(); ++p) {
    const auto& d = ctx.prog.preds[p];
    const Binding& b = ctx.bindings[p];
    std::string rel = b.bound ? b.relation : qualified(ctx.schema, d.name);
    for (int k = 0; k < d.arity(); ++k) {
      if (d.arg_kinds[k] != lang::TypeKind::Symbol) continue;
      std::string col = b.bound ? qi(b.columns[k]) + "::text" : qi(d.arg_names[k]) + "::text";
      parts[d.arg_types[k]].push_back("SELECT " + col + " FROM " + rel);
    }
  }
  std::map<std::string, double> out;
  for (auto& [type, qs] : parts) {
    std::string sql = "SELECT count(*) FROM (";
    for (size_t i = 0; i < qs.size(); ++i) sql += (i ? " UNION " : "") + qs[i];
    out[type] = static_cast<double>(spi.query(sql + ") u").int8(0, 0));
  }
  return out;
}

std::string fmt_count(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

// The plan and estimate of one clause.
ExplainRow explain_clause(const ProgramCtx& ctx, size_t ci, const std::vector<double>& rel,
                          const std::map<std::string, double>& dom) {
  const auto& c = ctx.prog.clauses[ci];
  const auto& preds = ctx.prog.preds;
  std::vector<size_t> order;
  for (size_t i = 0; i < c.lits.size(); ++i) if (!c.lits[i].positive) order.push_back(i);
  for (size_t i = 0; i < c.lits.size(); ++i) if (c.lits[i].positive) order.push_back(i);
  std::set<std::string> bound;
  std::map<std::string, double> var_dom;
  std::string plan;
  double est = 1, cap = 1;
  int step = 0;
  for (size_t i : order) {
    const auto& l = c.lits[i];
    const auto& d = preds[l.pred];
    std::vector<std::string> joins, fresh;
    for (size_t k = 0; k < l.args.size(); ++k) {
      if (!l.args[k].is_var()) continue;
      const std::string& v = l.args[k].text;
      auto it = dom.find(d.arg_types[k]);
      double ds = it == dom.end() ? 1 : std::max(1.0, it->second);
      var_dom[v] = std::max(var_dom[v], ds);
      if (bound.count(v)) joins.push_back(v);
      else if (std::find(fresh.begin(), fresh.end(), v) == fresh.end()) fresh.push_back(v);
    }
    std::string name = std::string(l.positive ? "" : "!") + d.name;
    std::string line;
    if (step == 0) {
      line = "scan " + name + " (" + fmt_count(rel[l.pred]) + " evidence rows)";
      est = std::max(1.0, rel[l.pred]);
    } else if (fresh.empty() && l.positive) {
      line = "anti-join " + name + " on (" + [&] { std::string s; for (auto& v : joins) s += (s.empty() ? "" : ", ") + v; return s; }() +
             ") against its true-for-sure tuples, then look up atom ids";
    } else {
      std::string on;
      for (auto& v : joins) on += (on.empty() ? "" : ", ") + v;
      line = std::string(fresh.empty() ? "semi-join " : "join ") + name + (on.empty() ? " (cross product)" : " on (" + on + ")");
      double r = std::max(1.0, rel[l.pred]);
      double div = 1;
      for (auto& v : joins) div *= var_dom[v];
      est = est * (l.positive ? std::max(r, 1.0) : r) / div;
      if (l.positive && !fresh.empty()) {
        // Positive literals with unbound variables range over materialised atoms.
        double m = 1;
        for (auto& v : fresh) m *= var_dom[v];
        est = std::max(est, m);
      }
    }
    for (auto& v : fresh) bound.insert(v);
    plan += (plan.empty() ? "" : "\n") + std::to_string(++step) + ". " + line;
  }
  for (auto& [v, ds] : var_dom) cap *= ds;
  if (!c.conditions.empty()) plan += "\n" + std::to_string(++step) + ". filter " + std::to_string(c.conditions.size()) + " condition(s)";
  if (!c.exist_vars.empty()) plan += "\n" + std::to_string(++step) + ". group by the non-existential variables";
  plan += "\n" + std::to_string(++step) + ". build signed literal lists of active atoms; consolidate";
  return ExplainRow{static_cast<int>(ci) + 1, lang::format_clause(c), plan, std::min(est, cap)};
}


}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.explain_ground(name text) returns table(clause int, clause_text text, plan text, estimated_groundings float8)
Datum mln_explain_ground(PG_FUNCTION_ARGS) {
  std::vector<ExplainRow>* rows = nullptr;
  MLN_GUARDED({
    std::string name = text_arg(fcinfo, 0);
    Spi spi;
    ProgramCtx ctx = load_program(spi, name);
    auto rel = relation_sizes(spi, ctx);
    auto dom = domain_sizes(spi, ctx);
    static std::vector<ExplainRow> keep;  // copied out below, before any PostgreSQL error can occur
    keep.clear();
    for (size_t ci = 0; ci < ctx.prog.clauses.size(); ++ci) keep.push_back(explain_clause(ctx, ci, rel, dom));
    rows = &keep;
  });
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (const auto& r : *rows) {
    Datum values[4];
    bool nulls[4] = {false, false, false, false};
    values[0] = Int32GetDatum(r.clause);
    values[1] = CStringGetTextDatum(r.text.c_str());
    values[2] = CStringGetTextDatum(r.plan.c_str());
    values[3] = Float8GetDatum(r.estimate);
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  return (Datum)0;
}
