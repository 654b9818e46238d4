// Step 1 of grounding a ProbLog program (problog_ground.hpp): the
// over-approximating Datalog program, built as a dl::Program whose atoms
// and terms carry the ProbLog statements' lines and columns, and its
// evaluation for callers without tables.
#include "ground/problog_ground.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
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

// One rule of the Datalog program under construction: its variables by
// name, its atoms built from ProbLog's with their positions.
class RuleMaker {
 public:
  RuleMaker(const pl::Program& p, dl::ProgramBuilder& b, lang::SourcePos at) : p_(p), b_(b) { r_.at = at; }

  dl::Term var(const std::string& name, lang::SourcePos at) {
    dl::Term t;
    t.pos = at;
    const auto it = std::find(r_.vars.begin(), r_.vars.end(), name);
    t.var = static_cast<int>(it - r_.vars.begin());
    if (it == r_.vars.end()) r_.vars.push_back(name);
    return t;
  }
  static dl::Term constant(const pl::Term& s) {
    dl::Term t;
    t.pos = s.pos;
    if (s.kind == pl::Term::Kind::Int) t.kind = dl::Term::Kind::Int, t.ival = s.ival;
    else t.kind = dl::Term::Kind::Str, t.sval = s.name;
    return t;
  }
  dl::Term term(const pl::Term& s) { return s.kind == pl::Term::Kind::Var ? var(s.name, s.pos) : constant(s); }

  // An atom as Datalog reads it: a derived relation with its leading 0; `_`
  // in a derived atom as the fresh variable `*fresh` counts (rule_vars'
  // order), kept as `_` elsewhere.
  dl::Atom atom(const pl::Atom& a, int* fresh) {
    const pl::Predicate& pr = p_.preds[static_cast<size_t>(a.pred)];
    dl::Atom out;
    out.pos = a.pos;
    if (pr.derived) out.args.push_back(zero(a.pos));
    for (const pl::Term& t : a.args) {
      if (t.kind != pl::Term::Kind::Anon) out.args.push_back(term(t));
      else if (pr.derived && fresh) out.args.push_back(var(detail::fresh_var((*fresh)++), t.pos));
      else out.args.push_back(anon(t.pos));
    }
    out.rel = b_.relation(pr.name, static_cast<int>(out.args.size()), a.pos);
    return out;
  }
  // `name(0, vars...)`: a rule's, query's or evidence's own relation.
  dl::Atom own(const std::string& name, const std::vector<std::string>& vars, lang::SourcePos at) {
    dl::Atom out;
    out.pos = at;
    out.args.push_back(zero(at));
    for (const std::string& v : vars) out.args.push_back(var(v, at));
    out.rel = b_.relation(name, static_cast<int>(out.args.size()), at);
    return out;
  }

  // The body Datalog evaluates for a rule's instances: its positive atoms,
  // its negated input atoms and comparisons (all certain); negated derived
  // atoms are dropped (over-approximation).  Whether it used __pl_one.
  bool body(const pl::Rule& r) {
    int fresh = 0;
    for (const pl::Atom& a : r.pos) r_.pos.push_back(atom(a, &fresh));
    const bool one = r.pos.empty() && (!r.neg.empty() || !r.cmps.empty());
    if (one) r_.pos.push_back(own("__pl_one", {}, r.at));
    for (const pl::Atom& a : r.neg)
      if (!p_.preds[static_cast<size_t>(a.pred)].derived) r_.neg.push_back(atom(a, nullptr));
    for (const pl::Compare& c : r.cmps) {
      dl::Compare d;
      d.pos = c.pos;
      d.op = cmp(c.op);
      d.lhs.leaf = term(c.lhs), d.lhs.pos = c.lhs.pos;
      d.rhs.leaf = term(c.rhs), d.rhs.pos = c.rhs.pos;
      r_.cmps.push_back(std::move(d));
    }
    return one;
  }
  void head(dl::Atom h) { r_.head = std::move(h); }
  void pos_atom(dl::Atom a) { r_.pos.push_back(std::move(a)); }
  void add() { b_.add_rule(std::move(r_)); }

 private:
  static dl::Term zero(lang::SourcePos at) {
    dl::Term t;
    t.kind = dl::Term::Kind::Int;
    t.pos = at;
    return t;
  }
  static dl::Term anon(lang::SourcePos at) {
    dl::Term t;
    t.kind = dl::Term::Kind::Anon;
    t.pos = at;
    return t;
  }
  // pl::Compare::op is Datalog's spelling.
  static dl::Cmp cmp(const std::string& op) {
    for (dl::Cmp c : {dl::Cmp::Eq, dl::Cmp::Ne, dl::Cmp::Lt, dl::Cmp::Le, dl::Cmp::Gt, dl::Cmp::Ge})
      if (op == dl::cmp_text(c)) return c;
    throw std::logic_error("problog: comparison " + op);
  }
  const pl::Program& p_;
  dl::ProgramBuilder& b_;
  dl::Rule r_;
};

// The program's statements in source-line order (the order in which a
// parser of the same program as text would meet them: a relation's first
// mention and the first error are the earliest in the ProbLog text).
class Statements {
 public:
  void put(lang::SourcePos at, std::function<void(dl::ProgramBuilder&)> add) {
    list_.push_back({std::max(at.line, 1), list_.size(), std::move(add)});
  }
  dl::Program build(const pl::Program& p) {
    std::stable_sort(list_.begin(), list_.end(), [](const S& a, const S& b) { return a.line < b.line; });
    dl::ProgramBuilder b;
    for (S& s : list_) s.add(b);
    // A random relation's first column (the "0" before the author's
    // arguments) is not the author's: Datalog's messages name the others as
    // p's arguments (dl::Relation::hidden_columns).
    for (dl::Relation& rel : b.program().rels) {
      const int pred = p.find(rel.name);
      if (pred >= 0 && p.preds[static_cast<size_t>(pred)].derived) rel.hidden_columns = 1;
    }
    return b.finish();
  }

 private:
  struct S {
    int line;
    size_t seq;
    std::function<void(dl::ProgramBuilder&)> add;
  };
  std::vector<S> list_;
};

// The possible atoms of the host relations that the Datalog program reads,
// as facts at their rules' statements; a relation with none is defined by a
// rule that derives nothing (`a(0) :- a(0).`: a relation no rule defines
// would be read from a table).
void host_facts(const pl::Program& p, const detail::HostPart& host, Statements& out) {
  std::vector<char> stated(p.preds.size(), 0);
  std::vector<const pl::Atom*> some(p.preds.size(), nullptr);
  std::unordered_set<std::string> seen;
  auto key = [](const pl::Atom& a) {
    std::string k = std::to_string(a.pred);
    for (const pl::Term& t : a.args) k += '\x1f' + std::to_string(static_cast<int>(t.kind)) + t.name + std::to_string(t.ival);
    return k;
  };
  for (size_t i = 0; i < p.rules.size(); ++i) {
    if (!host.rule[i]) continue;
    for (const pl::HeadAlt& h : p.rules[i].head) {
      const size_t q = static_cast<size_t>(h.atom.pred);
      if (!host.visible[q]) continue;
      if (!some[q]) some[q] = &h.atom;
      if (!host.fires[i] || !seen.insert(key(h.atom)).second) continue;
      stated[q] = 1;
      out.put(p.rules[i].at, [&p, &h, at = p.rules[i].at](dl::ProgramBuilder& b) {
        RuleMaker m(p, b, at);
        m.head(m.atom(h.atom, nullptr));
        m.add();
      });
    }
  }
  for (size_t q = 0; q < p.preds.size(); ++q)
    if (host.visible[q] && !stated[q])
      out.put(some[q]->pos, [&p, a = some[q]](dl::ProgramBuilder& b) {
        RuleMaker m(p, b, a->pos);
        m.head(m.atom(*a, nullptr));
        m.pos_atom(m.atom(*a, nullptr));
        m.add();
      });
}

}  // namespace

dl::Program datalog_program(const pl::Program& p) {
  Statements out;
  for (const pl::InputDirective& d : p.inputs)
    out.put(d.pos, [&d](dl::ProgramBuilder& b) { b.directives(d.text, d.pos); });
  const detail::HostPart host = detail::host_part(p);
  host_facts(p, host, out);
  bool one = false;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    if (host.rule[i]) continue;  // grounded on the host (build_ground)
    const pl::Rule& r = p.rules[i];
    one = one || (r.pos.empty() && (!r.neg.empty() || !r.cmps.empty()));
    // Every head, probability 0 included: each random relation stays a
    // rule's head in Datalog (a relation no rule defines is a table there).
    for (const pl::HeadAlt& h : r.head)
      out.put(r.at, [&p, &r, &h](dl::ProgramBuilder& b) {
        RuleMaker m(p, b, r.at);  // the head first, as a parser of the rule's text meets it
        m.head(m.atom(h.atom, nullptr));
        m.body(r);
        m.add();
      });
    out.put(r.at, [&p, &r, i](dl::ProgramBuilder& b) {
      RuleMaker m(p, b, r.at);
      m.head(m.own(rule_relation(i), detail::rule_vars(p, r), r.at));
      m.body(r);
      m.add();
    });
  }
  for (size_t k = 0; k < p.queries.size(); ++k)
    out.put(p.queries[k].pos, [&p, k](dl::ProgramBuilder& b) {
      const pl::Atom& q = p.queries[k];
      std::vector<std::string> vars;
      pl::Atom named = q;
      int fresh = 0;
      for (pl::Term& t : named.args) {
        if (t.kind == pl::Term::Kind::Anon) t.kind = pl::Term::Kind::Var, t.name = detail::fresh_var(fresh++);
        if (t.kind == pl::Term::Kind::Var && std::find(vars.begin(), vars.end(), t.name) == vars.end())
          vars.push_back(t.name);
      }
      RuleMaker m(p, b, q.pos);
      m.head(m.own(query_relation(k), vars, q.pos));
      m.pos_atom(m.atom(named, nullptr));
      m.add();
    });
  for (size_t k = 0; k < p.evidence.size(); ++k)
    out.put(p.evidence[k].atom.pos, [&p, k](dl::ProgramBuilder& b) {
      const pl::Atom& e = p.evidence[k].atom;
      RuleMaker m(p, b, e.pos);
      m.head(m.own(evidence_relation(k), {}, e.pos));
      m.pos_atom(m.atom(e, nullptr));
      m.add();
    });
  if (one)
    out.put({1, 1}, [&p](dl::ProgramBuilder& b) {
      RuleMaker m(p, b, {1, 1});
      m.head(m.own("__pl_one", {}, {1, 1}));
      m.add();
    });
  return out.build(p);
}

GroundProgram ground_program(gpu::Engine& eng, const pl::Program& p) {
  for (const pl::Predicate& pr : p.preds)
    if (pr.input)
      throw lang::LangError(lang::LangError::Kind::UnknownPredicate, pr.first.line, pr.first.col, pr.name,
                            "no rule or fact defines \"" + pr.name + "\" and this caller reads no table");
  dl::Program dp = datalog_program(p);
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
