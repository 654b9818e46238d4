// make_input(): Tuffy's symbol table and type domains (reference §2.3, §3.1)
// from text-level program, queries and evidence.
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "ground/grounder.hpp"

namespace mln::ground {
namespace {

class Interner {
 public:
  explicit Interner(GroundInput& in) : in_(in) {}

  // Id of a symbol, assigned in first-seen order from 1.
  int32_t intern(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    int32_t id = static_cast<int32_t>(in_.symbols.names.size());
    in_.symbols.names.push_back(s);
    ids_.emplace(s, id);
    return id;
  }

  // Value of a constant in argument `pos` of `pred`: a raw integer for Int
  // types, else a symbol id (added to the type's domain for symbolic types).
  int32_t arg(const lang::PredicateDecl& d, size_t pos, const std::string& text, int line) {
    lang::TypeKind kind = d.arg_kinds[pos];
    if (kind == lang::TypeKind::Int) {
      try {
        size_t used = 0;
        long long v = std::stoll(text, &used);
        if (used == text.size()) return static_cast<int32_t>(v);
      } catch (...) {
      }
      throw lang::LangError(lang::LangError::Kind::TypeClash, line, 0, text,
                            "non-integer value '" + text + "' for an integer argument of " + d.name);
    }
    int32_t id = intern(text);
    if (kind == lang::TypeKind::Symbol) add_to_domain(d.arg_types[pos], id);
    return id;
  }

 private:
  void add_to_domain(const std::string& type, int32_t id) {
    auto it = type_index_.find(type);
    if (it == type_index_.end()) {
      it = type_index_.emplace(type, in_.type_domains.size()).first;
      in_.type_domains.emplace_back(type, std::vector<int32_t>{});
      seen_.emplace_back();
    }
    if (seen_[it->second].insert(id).second) in_.type_domains[it->second].second.push_back(id);
  }

  GroundInput& in_;
  std::unordered_map<std::string, int32_t> ids_;
  std::unordered_map<std::string, size_t> type_index_;
  std::vector<std::unordered_set<int32_t>> seen_;
};

// Interns the constants of a literal (program constants come first).
void intern_literal(Interner& in, const lang::Program& prog, const lang::Literal& l) {
  const lang::PredicateDecl& d = prog.preds[l.pred];
  for (size_t i = 0; i < l.args.size(); ++i)
    if (!l.args[i].is_var()) in.arg(d, i, l.args[i].text, l.pos.line);
}

// Hash of an argument tuple, for evidence deduplication.
struct TupleHash {
  size_t operator()(const std::vector<int32_t>& v) const {
    size_t h = 1469598103934665603ull;
    for (int32_t x : v) h = (h ^ static_cast<uint32_t>(x)) * 1099511628211ull;
    return h;
  }
};

}  // namespace

GroundInput make_input(const lang::Program& prog, const std::vector<lang::Query>& queries,
                       const std::vector<lang::EvidenceAtom>& evidence) {
  GroundInput in;
  in.program = &prog;
  Interner intern(in);
  for (const auto& c : prog.clauses)
    for (const auto& l : c.lits) intern_literal(intern, prog, l);
  for (const auto& r : prog.rules) {
    intern_literal(intern, prog, r.head);
    for (const auto& l : r.body) intern_literal(intern, prog, l);
  }
  for (const auto& q : queries) {
    QueryPattern qp;
    qp.pred = q.pred;
    std::vector<std::string> vars;
    const lang::PredicateDecl& d = prog.preds.at(q.pred);
    for (size_t i = 0; i < q.args.size(); ++i) {
      const lang::Term& t = q.args[i];
      if (!t.is_var()) {
        qp.args.push_back(intern.arg(d, i, t.text, 0));
        continue;
      }
      size_t k = 0;
      while (k < vars.size() && vars[k] != t.text) ++k;
      if (k == vars.size()) vars.push_back(t.text);
      qp.args.push_back(-static_cast<int32_t>(k + 1));
    }
    in.queries.push_back(std::move(qp));
  }
  in.evidence.resize(prog.preds.size());
  std::vector<std::unordered_map<std::vector<int32_t>, size_t, TupleHash>> seen(prog.preds.size());
  for (const auto& e : evidence) {
    const lang::PredicateDecl& d = prog.preds.at(e.pred);
    PredEvidence& pe = in.evidence[e.pred];
    if (pe.args.empty()) pe.args.resize(d.arity());
    std::vector<int32_t> key(e.args.size());
    for (size_t i = 0; i < e.args.size(); ++i) key[i] = intern.arg(d, i, e.args[i], e.line);
    bool truth = e.truth;
    double prior = e.prior;
    if (!std::isnan(prior) && (prior >= 1 || prior <= 0)) {  // a prior of 0 or 1 is hard evidence
      truth = prior >= 1;
      prior = std::nan("");
    }
    auto it = seen[e.pred].find(key);
    if (it != seen[e.pred].end()) {  // duplicate line: the last one wins (documented deviation)
      pe.truth[it->second] = truth;
      pe.prior[it->second] = prior;
      continue;
    }
    seen[e.pred].emplace(key, pe.truth.size());
    for (size_t i = 0; i < key.size(); ++i) pe.args[i].push_back(key[i]);
    pe.truth.push_back(truth);
    pe.prior.push_back(prior);
  }
  for (size_t p = 0; p < in.evidence.size(); ++p)
    if (in.evidence[p].args.empty()) in.evidence[p].args.resize(prog.preds[p].arity());
  return in;
}

}  // namespace mln::ground
