// The propositional part of a ProbLog program, grounded on the host
// (problog_internal.hpp, HostPart): which rules and relations, and which of
// those rules can fire.
#include <algorithm>
#include <unordered_map>

#include "ground/problog_internal.hpp"

namespace mln::ground::problog::detail {

namespace {

// No variable, comparison or table atom: the rule is its own one instance.
bool constant_rule(const pl::Program& p, const pl::Rule& r) {
  if (!r.cmps.empty()) return false;
  auto constant = [&](const pl::Atom& a) {
    if (p.preds[static_cast<size_t>(a.pred)].input) return false;
    return std::all_of(a.args.begin(), a.args.end(), [](const pl::Term& t) { return t.is_const(); });
  };
  return std::all_of(r.head.begin(), r.head.end(), [&](const pl::HeadAlt& h) { return constant(h.atom); }) &&
         std::all_of(r.pos.begin(), r.pos.end(), constant) && std::all_of(r.neg.begin(), r.neg.end(), constant);
}

// Ids of constant atoms: a nullary atom's by its predicate (no hashing: the
// propositional benchmarks have millions of them), others' by predicate and
// constants.
class AtomIds {
 public:
  explicit AtomIds(size_t preds) : nullary_(preds, -1) {}
  int32_t get(const pl::Atom& a) {
    if (a.args.empty()) {
      int32_t& id = nullary_[static_cast<size_t>(a.pred)];
      if (id < 0) id = n_++;
      return id;
    }
    key_.assign(reinterpret_cast<const char*>(&a.pred), sizeof a.pred);
    for (const pl::Term& t : a.args) {
      if (t.kind == pl::Term::Kind::Int) {
        key_ += 'i';
        key_.append(reinterpret_cast<const char*>(&t.ival), sizeof t.ival);
      } else {
        key_ += 's';
        key_ += t.name;
        key_ += '\0';
      }
    }
    const auto [it, fresh] = ids_.emplace(key_, n_);
    if (fresh) ++n_;
    return it->second;
  }

 private:
  std::vector<int32_t> nullary_;
  std::unordered_map<std::string, int32_t> ids_;
  std::string key_;
  int32_t n_ = 0;
};

// The relations that constant rules give integers and text in one column:
// left to the Datalog program, whose types refuse them as before (the
// encoded values of the two kinds could meet).
std::vector<char> mixed_columns(const pl::Program& p, const std::vector<char>& constant) {
  std::vector<std::vector<uint8_t>> kinds(p.preds.size());  // per column: 1 integer, 2 text
  std::vector<char> mixed(p.preds.size(), 0);
  auto note = [&](const pl::Atom& a) {
    std::vector<uint8_t>& k = kinds[static_cast<size_t>(a.pred)];
    k.resize(std::max(k.size(), a.args.size()), 0);
    for (size_t c = 0; c < a.args.size(); ++c) {
      k[c] |= a.args[c].kind == pl::Term::Kind::Int ? 1 : 2;
      if (k[c] == 3) mixed[static_cast<size_t>(a.pred)] = 1;
    }
  };
  for (size_t r = 0; r < p.rules.size(); ++r) {
    if (!constant[r]) continue;
    for (const pl::HeadAlt& h : p.rules[r].head) note(h.atom);
    for (const pl::Atom& a : p.rules[r].pos) note(a);
  }
  return mixed;
}

// The host relations: the derived ones, less (transitively) those that a
// rule other than a constant one defines, those of mixed_columns, and
// those that a host rule reads positively or shares a head with and are
// not host relations.
void host_relations(const pl::Program& p, HostPart& h) {
  const size_t np = p.preds.size();
  std::vector<std::vector<int32_t>> touching(np);  // constant rules defining or reading a relation positively
  std::vector<int> dropped;
  auto drop = [&](int q) {
    if (h.pred[static_cast<size_t>(q)]) h.pred[static_cast<size_t>(q)] = 0, dropped.push_back(q);
  };
  for (size_t r = 0; r < p.rules.size(); ++r) h.rule[r] = constant_rule(p, p.rules[r]);
  const std::vector<char> mixed = mixed_columns(p, h.rule);
  for (size_t i = 0; i < np; ++i) h.pred[i] = p.preds[i].derived;
  for (size_t i = 0; i < np; ++i)
    if (mixed[i]) drop(static_cast<int>(i));
  for (size_t r = 0; r < p.rules.size(); ++r) {
    const pl::Rule& rule = p.rules[r];
    for (const pl::HeadAlt& hd : rule.head) {
      if (!h.rule[r]) drop(hd.atom.pred);
      else touching[static_cast<size_t>(hd.atom.pred)].push_back(static_cast<int32_t>(r));
    }
    if (h.rule[r])
      for (const pl::Atom& a : rule.pos) touching[static_cast<size_t>(a.pred)].push_back(static_cast<int32_t>(r));
  }
  while (!dropped.empty()) {
    const int q = dropped.back();
    dropped.pop_back();
    for (int32_t r : touching[static_cast<size_t>(q)]) {
      if (!h.rule[static_cast<size_t>(r)]) continue;
      h.rule[static_cast<size_t>(r)] = 0;
      for (const pl::HeadAlt& hd : p.rules[static_cast<size_t>(r)].head) drop(hd.atom.pred);
    }
  }
}

// The host rules whose positive body atoms can all be true: the least
// fixpoint of the rules with every head possible (probability 0 included,
// as the Datalog program has it), each rule counting its distinct body
// atoms not yet possible.
void host_fixpoint(const pl::Program& p, HostPart& h) {
  AtomIds ids(p.preds.size());
  std::vector<std::vector<int32_t>> watch;  // atom -> host rules that read it
  std::vector<char> possible;
  std::vector<int32_t> need(p.rules.size(), 0), ready, body;
  for (size_t r = 0; r < p.rules.size(); ++r) {
    if (!h.rule[r]) continue;
    body.clear();
    for (const pl::Atom& a : p.rules[r].pos) body.push_back(ids.get(a));
    std::sort(body.begin(), body.end());
    body.erase(std::unique(body.begin(), body.end()), body.end());
    for (int32_t a : body) {
      if (watch.size() <= static_cast<size_t>(a)) watch.resize(static_cast<size_t>(a) + 1);
      watch[static_cast<size_t>(a)].push_back(static_cast<int32_t>(r));
    }
    need[r] = static_cast<int32_t>(body.size());
    if (body.empty()) ready.push_back(static_cast<int32_t>(r));
  }
  while (!ready.empty()) {
    const size_t r = static_cast<size_t>(ready.back());
    ready.pop_back();
    h.fires[r] = 1;
    for (const pl::HeadAlt& hd : p.rules[r].head) {
      const size_t a = static_cast<size_t>(ids.get(hd.atom));
      if (possible.size() <= a) possible.resize(a + 1, 0);
      if (possible[a]) continue;
      possible[a] = 1;
      if (a < watch.size())
        for (int32_t w : watch[a])
          if (--need[static_cast<size_t>(w)] == 0) ready.push_back(w);
    }
  }
}

}  // namespace

HostPart host_part(const pl::Program& p) {
  HostPart h;
  h.rule.assign(p.rules.size(), 0), h.fires.assign(p.rules.size(), 0);
  h.pred.assign(p.preds.size(), 0), h.visible.assign(p.preds.size(), 0);
  host_relations(p, h);
  host_fixpoint(p, h);
  auto see = [&](const pl::Atom& a) {
    if (h.pred[static_cast<size_t>(a.pred)]) h.visible[static_cast<size_t>(a.pred)] = 1;
  };
  for (size_t r = 0; r < p.rules.size(); ++r) {
    h.any = h.any || h.rule[r];
    if (!h.rule[r])
      for (const pl::Atom& a : p.rules[r].pos) see(a);
  }
  for (const pl::Atom& q : p.queries) see(q);
  for (const pl::Evidence& e : p.evidence) see(e.atom);
  return h;
}

}  // namespace mln::ground::problog::detail
