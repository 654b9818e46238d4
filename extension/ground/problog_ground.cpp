// Step 1 of grounding a ProbLog program (problog_ground.hpp): the
// over-approximating Datalog program, written as text at the ProbLog
// statements' lines and columns, and its evaluation for callers without
// tables.
#include "ground/problog_ground.hpp"

#include <algorithm>
#include <unordered_set>

#include "ground/datalog_eval.hpp"
#include "ground/problog_internal.hpp"

namespace mln::ground::problog {

std::string rule_relation(size_t rule) { return "__pl_r" + std::to_string(rule); }
std::string query_relation(size_t query) { return "__pl_q" + std::to_string(query); }
std::string evidence_relation(size_t evidence) { return "__pl_e" + std::to_string(evidence); }

namespace detail {

std::vector<std::string> rule_vars(const pl::Program& p, const pl::Rule& r) {
  std::vector<std::string> vars;
  int fresh = 0;
  for (const pl::Atom& a : r.pos) {
    const bool derived = p.preds[static_cast<size_t>(a.pred)].derived;
    for (const pl::Term& t : a.args) {
      if (t.kind == pl::Term::Kind::Var && std::find(vars.begin(), vars.end(), t.name) == vars.end())
        vars.push_back(t.name);
      if (t.kind == pl::Term::Kind::Anon && derived) vars.push_back(fresh_var(fresh++));
    }
  }
  return vars;
}

std::string fresh_var(int k) { return "__pl_v" + std::to_string(k); }

}  // namespace detail

namespace {

std::string constant(const pl::Term& t) {
  if (t.kind == pl::Term::Kind::Int) return std::to_string(t.ival);
  std::string s = "\"";
  for (char c : t.name) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s + "\"";
}

// An atom as Datalog reads it: derived relations with their leading 0;
// `_` in a derived atom as the fresh variable `*fresh` counts (rule_vars'
// order), kept as `_` elsewhere.
std::string atom(const pl::Program& p, const pl::Atom& a, int* fresh) {
  const pl::Predicate& pr = p.preds[static_cast<size_t>(a.pred)];
  std::string s = pr.name + "(";
  bool first = true;
  if (pr.derived) s += "0", first = false;
  for (const pl::Term& t : a.args) {
    s += first ? "" : ", ";
    first = false;
    if (t.kind == pl::Term::Kind::Var) s += t.name;
    else if (t.kind == pl::Term::Kind::Anon) s += pr.derived && fresh ? detail::fresh_var((*fresh)++) : "_";
    else s += constant(t);
  }
  return s + ")";
}

// The body Datalog evaluates for a rule's instances: its positive atoms,
// its negated input atoms and comparisons (all certain); negated derived
// atoms are dropped (over-approximation).
std::string body(const pl::Program& p, const pl::Rule& r) {
  std::string s;
  int fresh = 0;
  auto add = [&](const std::string& lit) { s += (s.empty() ? "" : ", ") + lit; };
  for (const pl::Atom& a : r.pos) add(atom(p, a, &fresh));
  if (r.pos.empty() && (!r.neg.empty() || !r.cmps.empty())) add("__pl_one(0)");
  for (const pl::Atom& a : r.neg)
    if (!p.preds[static_cast<size_t>(a.pred)].derived) add("!" + atom(p, a, nullptr));
  for (const pl::Compare& c : r.cmps) {
    auto term = [&](const pl::Term& t) { return t.kind == pl::Term::Kind::Var ? t.name : constant(t); };
    add(term(c.lhs) + " " + c.op + " " + term(c.rhs));
  }
  return s;
}

std::string head(const std::string& name, const std::vector<std::string>& vars) {
  std::string s = name + "(0";
  for (const std::string& v : vars) s += ", " + v;
  return s + ")";
}

// Text placed at a line and column of the output (statements of one source
// statement share its line).
class Placer {
 public:
  void put(lang::SourcePos at, const std::string& text) {
    const size_t line = static_cast<size_t>(std::max(at.line, 1));
    if (lines_.size() < line) lines_.resize(line);
    std::string& l = lines_[line - 1];
    if (l.size() + 1 < static_cast<size_t>(at.col)) l.resize(static_cast<size_t>(at.col) - 1, ' ');
    else if (!l.empty()) l += ' ';
    l += text;
  }
  std::string text() const {
    std::string s;
    for (const std::string& l : lines_) s += l + "\n";
    return s;
  }

 private:
  std::vector<std::string> lines_;
};

// The possible atoms of the host relations that the Datalog program reads,
// as facts at their rules' statements; a relation with none is defined by a
// rule that derives nothing (`a(0) :- a(0).`: a relation no rule defines
// would be read from a table).
void host_facts(const pl::Program& p, const detail::HostPart& host, Placer& out) {
  std::vector<char> stated(p.preds.size(), 0);
  std::vector<const pl::Atom*> some(p.preds.size(), nullptr);
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    if (!host.rule[i]) continue;
    for (const pl::HeadAlt& h : p.rules[i].head) {
      const size_t q = static_cast<size_t>(h.atom.pred);
      if (!host.visible[q]) continue;
      if (!some[q]) some[q] = &h.atom;
      if (!host.fires[i]) continue;
      std::string fact = atom(p, h.atom, nullptr);
      if (seen.insert(fact).second) out.put(p.rules[i].at, fact + "."), stated[q] = 1;
    }
  }
  for (size_t q = 0; q < p.preds.size(); ++q)
    if (host.visible[q] && !stated[q]) {
      const std::string a = atom(p, *some[q], nullptr);
      out.put(some[q]->pos, a + " :- " + a + ".");
    }
}

}  // namespace

std::string datalog_text(const pl::Program& p) {
  Placer out;
  for (const pl::InputDirective& d : p.inputs) out.put(d.pos, d.text);
  const detail::HostPart host = detail::host_part(p);
  host_facts(p, host, out);
  bool one = false;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    if (host.rule[i]) continue;  // grounded on the host (build_ground)
    const pl::Rule& r = p.rules[i];
    const std::string b = body(p, r);
    const std::string tail = b.empty() ? "." : " :- " + b + ".";
    one = one || (r.pos.empty() && !b.empty());
    // Every head, probability 0 included: each random relation stays a
    // rule's head in Datalog (a relation no rule defines is a table there).
    for (const pl::HeadAlt& h : r.head) out.put(r.at, atom(p, h.atom, nullptr) + tail);
    out.put(r.at, head(rule_relation(i), detail::rule_vars(p, r)) + tail);
  }
  for (size_t k = 0; k < p.queries.size(); ++k) {
    const pl::Atom& q = p.queries[k];
    std::vector<std::string> vars;
    pl::Atom named = q;
    int fresh = 0;
    for (pl::Term& t : named.args) {
      if (t.kind == pl::Term::Kind::Anon) t.kind = pl::Term::Kind::Var, t.name = detail::fresh_var(fresh++);
      if (t.kind == pl::Term::Kind::Var && std::find(vars.begin(), vars.end(), t.name) == vars.end())
        vars.push_back(t.name);
    }
    out.put(q.pos, head(query_relation(k), vars) + " :- " + atom(p, named, nullptr) + ".");
  }
  for (size_t k = 0; k < p.evidence.size(); ++k) {
    const pl::Atom& e = p.evidence[k].atom;
    out.put(e.pos, head(evidence_relation(k), {}) + " :- " + atom(p, e, nullptr) + ".");
  }
  if (one) out.put({1, 1}, "__pl_one(0).");
  return out.text();
}

void mark_hidden_columns(const pl::Program& p, dl::Program& dp) {
  for (dl::Relation& rel : dp.rels) {
    const int pred = p.find(rel.name);
    if (pred >= 0 && p.preds[static_cast<size_t>(pred)].derived) rel.hidden_columns = 1;
  }
}

GroundProgram ground_program(gpu::Engine& eng, const pl::Program& p) {
  for (const pl::Predicate& pr : p.preds)
    if (pr.input)
      throw lang::LangError(lang::LangError::Kind::UnknownPredicate, pr.first.line, pr.first.col, pr.name,
                            "no rule or fact defines \"" + pr.name + "\" and this caller reads no table");
  dl::Program dp = dl::parse(datalog_text(p));
  mark_hidden_columns(p, dp);
  dl::infer_types(dp);
  dl::Symbols syms;
  dl::encode_constants(dp, syms);
  std::vector<gpu::Relation> rels = datalog::evaluate(eng, dp, std::vector<gpu::Relation>(dp.rels.size()), {});
  std::vector<gpu::HostTable> rows(dp.rels.size());
  for (size_t r = 0; r < dp.rels.size(); ++r)
    if (dp.rels[r].derived) rows[r] = eng.download(rels[r]);
  return build_ground(p, dp, rows, syms);
}

}  // namespace mln::ground::problog
