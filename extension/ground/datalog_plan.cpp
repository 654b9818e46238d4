// mln.datalog_explain's plans (docs/datalog.md, "Explain"): the evaluator's
// steps for each rule, simulated on estimated row counts.  The join order
// and the delta variants come from the evaluator's own functions
// (detail::next_atom, detail::recursive_atoms); the rest follows
// datalog_rule.cpp: comparisons as soon as their variables are bound
// (assignments after the filters), then the anti-joins, then the head.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "ground/datalog_eval.hpp"

namespace mln::ground::datalog {

namespace {

using dl::Term;

std::string term_text(const dl::Rule& r, const Term& t) {
  std::string s;
  switch (t.kind) {
    case Term::Kind::Var: s = r.vars[static_cast<size_t>(t.var)]; break;
    case Term::Kind::Anon: s = "_"; break;
    case Term::Kind::Int: s = std::to_string(t.ival); break;
    case Term::Kind::Str: s = "\"" + t.sval + "\""; break;
  }
  return t.agg == dl::Agg::None ? s : std::string(dl::agg_name(t.agg)) + "(" + s + ")";
}

std::string atom_text(const dl::Program& p, const dl::Rule& r, const dl::Atom& a) {
  std::string s = p.rels[a.rel].name + "(";
  for (size_t i = 0; i < a.args.size(); ++i) s += (i ? ", " : "") + term_text(r, a.args[i]);
  return s + ")";
}

std::string expr_text(const dl::Rule& r, const dl::Expr& e) {
  if (e.op == 0) return term_text(r, e.leaf);
  if (e.op == 'n') return "-" + expr_text(r, e.kids[0]);
  const auto kid = [&](const dl::Expr& k) { return k.op && k.op != 'n' ? "(" + expr_text(r, k) + ")" : expr_text(r, k); };
  return kid(e.kids[0]) + " " + e.op + " " + kid(e.kids[1]);
}

bool expr_bound(const dl::Expr& e, const std::vector<char>& bound) {
  if (e.op == 0) return e.leaf.kind != Term::Kind::Var || bound[static_cast<size_t>(e.leaf.var)];
  return std::all_of(e.kids.begin(), e.kids.end(), [&](const dl::Expr& k) { return expr_bound(k, bound); });
}

std::string rows_text(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", std::max(0.0, std::round(n)));
  return std::string("~") + buf + " rows";
}

// The variables of an atom (each once), the names of the shared ones.
std::vector<int> atom_vars(const dl::Atom& a) {
  std::vector<int> v;
  for (const Term& t : a.args)
    if (t.kind == Term::Kind::Var && std::find(v.begin(), v.end(), t.var) == v.end()) v.push_back(t.var);
  return v;
}

// One variant's steps: the delta atom `delta` (-1: none) reads the previous
// iteration's new rows.  `est` holds each relation's estimate.
class VariantPlan {
 public:
  VariantPlan(const dl::Program& p, const dl::Rule& r, const std::vector<double>& est,
              const std::vector<std::string>& how)
      : p_(p), r_(r), est_(est), how_(how), bound_(r.vars.size(), 0), done_(r.cmps.size(), 0) {}

  std::string run(int delta, const std::string& indent) {
    std::vector<int> left;  // positive atoms with variables, in body order
    for (size_t k = 0; k < r_.pos.size(); ++k)
      if (atom_vars(r_.pos[k]).empty()) step(indent, "check " + name(static_cast<int>(k), delta) + " holds");
      else left.push_back(static_cast<int>(k));
    bool first = true;
    while (!left.empty()) {
      std::vector<std::vector<int>> vars;
      std::vector<double> rows;
      for (int k : left) vars.push_back(atom_vars(r_.pos[k])), rows.push_back(est_[r_.pos[k].rel]);
      const size_t i = detail::next_atom(vars, rows, first ? nullptr : &bound_);
      const int k = left[i];
      std::string on;
      for (int v : vars[i])
        if (bound_[static_cast<size_t>(v)]) on += (on.empty() ? "" : ", ") + r_.vars[static_cast<size_t>(v)];
      const std::string what = name(k, delta) + " (" + rows_text(rows[i]) + ", " + how_[r_.pos[k].rel] + ")";
      step(indent, first ? "scan " + what : on.empty() ? "cross join " + what + " (host)" : "join " + what + " on " + on);
      for (int v : vars[i]) bound_[static_cast<size_t>(v)] = 1;
      left.erase(left.begin() + static_cast<long>(i));
      first = false;
      ready(indent);
    }
    if (first) ready(indent);  // a rule without positive atoms: assignments from constants
    for (const dl::Atom& a : r_.neg) {
      std::string on;
      for (int v : atom_vars(a)) on += (on.empty() ? "" : ", ") + r_.vars[static_cast<size_t>(v)];
      step(indent, "anti-join " + atom_text(p_, r_, a) + (on.empty() ? "" : " on " + on));
    }
    const bool agg = r_.aggregates();
    std::string keys;
    for (const Term& t : r_.head.args)
      if (t.agg == dl::Agg::None && t.kind == Term::Kind::Var) keys += (keys.empty() ? "" : ", ") + term_text(r_, t);
    step(indent, agg ? "aggregate " + atom_text(p_, r_, r_.head) + " over the distinct bindings" +
                           (keys.empty() ? "" : ", grouped by " + keys) + " (host)"
                     : "project -> " + atom_text(p_, r_, r_.head));
    return out_;
  }

 private:
  const dl::Program& p_;
  const dl::Rule& r_;
  const std::vector<double>& est_;
  const std::vector<std::string>& how_;
  std::vector<char> bound_, done_;
  std::string out_;

  std::string name(int k, int delta) const {
    return (k == delta ? "delta " : "") + atom_text(p_, r_, r_.pos[static_cast<size_t>(k)]);
  }
  void step(const std::string& indent, const std::string& s) { out_ += indent + "-> " + s + "\n"; }

  // The comparisons and assignments the bound variables allow (apply_ready).
  void ready(const std::string& indent) {
    for (bool more = true; more;) {
      more = false;
      for (size_t i = 0; i < r_.cmps.size(); ++i) {
        const dl::Compare& c = r_.cmps[i];
        if (done_[i] || c.assigns >= 0 || !expr_bound(c.lhs, bound_) || !expr_bound(c.rhs, bound_)) continue;
        done_[i] = 1;
        const bool host = c.lhs.op || c.rhs.op || (c.lhs.leaf.kind != Term::Kind::Var && c.rhs.leaf.kind != Term::Kind::Var);
        step(indent, "filter " + expr_text(r_, c.lhs) + " " + dl::cmp_text(c.op) + " " + expr_text(r_, c.rhs) +
                         (host ? " (host)" : ""));
      }
      for (size_t i = 0; i < r_.cmps.size(); ++i) {
        const dl::Compare& c = r_.cmps[i];
        if (done_[i] || c.assigns < 0 || !expr_bound(c.lhs, bound_)) continue;
        done_[i] = 1;
        bound_[static_cast<size_t>(c.assigns)] = 1;
        step(indent, "compute " + r_.vars[static_cast<size_t>(c.assigns)] + " = " + expr_text(r_, c.lhs) + " (host)");
        more = true;
        break;
      }
    }
  }
};

// A rule's estimated output: its largest positive atom (a fact: 1).
double rule_estimate(const dl::Rule& r, const std::vector<double>& est) {
  double n = r.pos.empty() ? 1 : 0;
  for (const dl::Atom& a : r.pos) n = std::max(n, est[a.rel]);
  return n;
}

}  // namespace

std::vector<RuleExplain> explain_program(const dl::Program& p, const std::vector<double>& est_rows,
                                         const std::vector<std::string>& est_how) {
  std::vector<double> est(p.rels.size(), 0);
  std::vector<std::string> how(p.rels.size(), "estimated");
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (!p.rels[r].derived) {
      if (r < est_rows.size()) est[r] = est_rows[r];
      how[r] = r < est_how.size() ? est_how[r] : "input";
    }
  std::vector<RuleExplain> out;
  for (size_t s = 0; s < p.strata.size(); ++s) {
    std::vector<char> in_s(p.rels.size(), 0);
    for (int r : p.strata[s]) in_s[r] = 1;
    std::vector<int> recursive;
    for (int ri : p.stratum_rules[s]) {  // the first round: rules reading lower strata only
      const dl::Rule& rule = p.rules[ri];
      if (!detail::recursive_atoms(rule, in_s).empty()) {
        recursive.push_back(ri);
        continue;
      }
      RuleExplain e{static_cast<int>(s), ri, false, rule_estimate(rule, est), ""};
      e.plan = "first round, once:\n" + VariantPlan(p, rule, est, how).run(-1, "  ");
      est[rule.head.rel] += e.est_rows;
      out.push_back(std::move(e));
    }
    for (int ri : recursive) {  // each semi-naive iteration, one variant per atom of the stratum
      const dl::Rule& rule = p.rules[ri];
      RuleExplain e{static_cast<int>(s), ri, true, rule_estimate(rule, est), ""};
      for (int k : detail::recursive_atoms(rule, in_s))
        e.plan += "each iteration, delta on " + atom_text(p, rule, rule.pos[static_cast<size_t>(k)]) + " (atom " +
                  std::to_string(k + 1) + "):\n" + VariantPlan(p, rule, est, how).run(k, "  ");
      out.push_back(std::move(e));
    }
  }
  for (RuleExplain& e : out)
    if (!e.plan.empty() && e.plan.back() == '\n') e.plan.pop_back();
  return out;
}

}  // namespace mln::ground::datalog
