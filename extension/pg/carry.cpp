// The last MAP answer carried to the new network (carry.hpp).
// The standard headers first: PostgreSQL's port.h redefines snprintf.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>

#include "format/clause_chunks.hpp"
#include "pg/json.hpp"
#include "pg/carry.hpp"

namespace mln::pg {
namespace {

// Keys from one row's aggregates: predicates, arities, and the arguments
// as one space-separated text (one SPI row: per-row arrays cost ~4 us each,
// ER's 4,000 true atoms 15 ms).
std::vector<ground::AtomKey> keys_of(const std::vector<int32_t>& preds, const std::vector<int32_t>& arity,
                                     const std::string& args) {
  std::vector<ground::AtomKey> out;
  out.reserve(preds.size());
  const char* p = args.c_str();
  for (size_t i = 0; i < preds.size(); ++i) {
    std::vector<int32_t> v(static_cast<size_t>(std::max(i < arity.size() ? arity[i] : 0, 0)));
    for (int32_t& x : v) x = static_cast<int32_t>(std::strtol(p, const_cast<char**>(&p), 10));
    out.emplace_back(preds[i], std::move(v));
  }
  return out;
}

constexpr const char* kKeyColumns =
    "coalesce(array_agg(x.pred ORDER BY x.id), '{}'), coalesce(array_agg(cardinality(x.args) ORDER BY x.id), '{}'), "
    "coalesce(string_agg(array_to_string(x.args, ' '), ' ' ORDER BY x.id), '')";


// Which of the tables `specs` ({table, "name:type|name:type"}, tables
// qualified and quoted) are ordinary tables without row-level security
// with each of their columns (as format_type names the types), in one
// catalog query: the tables read here are the previous grounding's, which
// the owner may have dropped or changed, and the role grounding may be
// another (a member of the owner's) whom no view or policy of the owner's
// is to run as; what cannot be read is simply not carried.
std::vector<bool> have_columns(Spi& spi, const std::vector<std::pair<std::string, std::string>>& specs) {
  std::vector<std::string> tables, cols;
  for (const auto& [t, c] : specs) {
    tables.push_back(t);
    cols.push_back(c);
  }
  Rows r = spi.query(
      "SELECT EXISTS (SELECT 1 FROM pg_class k WHERE k.oid = to_regclass(x.t) AND k.relkind = 'r' "
      "                 AND NOT k.relrowsecurity AND NOT k.relforcerowsecurity) "
      "   AND (SELECT count(DISTINCT c) FROM pg_attribute a, unnest(string_to_array(x.cols, '|')) c "
      "        WHERE a.attrelid = to_regclass(x.t) AND a.attnum > 0 AND NOT a.attisdropped "
      "          AND a.attname || ':' || format_type(a.atttypid, NULL) = c) = cardinality(string_to_array(x.cols, '|')) "
      "FROM unnest($1::text[], $2::text[]) WITH ORDINALITY x(t, cols, k) ORDER BY x.k",
      {text_array_param(tables), text_array_param(cols)});
  std::vector<bool> out;
  for (size_t i = 0; i < r.size(); ++i) out.push_back(r.boolean(i, 0));
  return out;
}

}  // namespace

int64_t stored_clauses(Spi& spi, const std::string& program) {
  Rows n = spi.query("SELECT (ground_stats->>'clauses')::int8 FROM mln.programs WHERE name = $1", {text_param(program)});
  return n.size() == 1 && !n.isnull(0, 0) ? n.int8(0, 0) : -1;
}

StoredAnswer read_stored_answer(Spi& spi, const std::string& schema, bool keys) {
  StoredAnswer a;
  const std::string s = qi(schema);
  const std::vector<bool> ok = have_columns(spi, {{s + "._atoms", "id:integer|pred:integer|args:integer[]"},
                                                  {s + "._marginal", "atom:integer|probability:double precision"},
                                                  {s + "._marginal_info", "job:bigint"},
                                                  {s + "._map", "atom:integer|truth:boolean"},
                                                  {s + "._map_info", "job:bigint|cost:double precision|"
                                                                     "bound:double precision|optimal:boolean"}});
  if (!ok[0]) return a;
  if (ok[1]) {
    Rows m = spi.query("SELECT coalesce(array_agg(atom ORDER BY atom), '{}'), "
                       "coalesce(array_agg(probability ORDER BY atom), '{}') FROM " + s + "._marginal");
    a.marginal_atoms = m.int4_array(0, 0);
    a.marginal_probs = m.float8_array(0, 1);
    a.have_marginals = !a.marginal_atoms.empty() && a.marginal_atoms.size() == a.marginal_probs.size();
    if (ok[2]) {
      Rows j = spi.query("SELECT max(job) FROM " + s + "._marginal_info");
      if (!j.isnull(0, 0)) a.marginal_job = j.int8(0, 0);
    }
  }
  if (!ok[3] || !ok[4]) return a;
  Rows info = spi.query("SELECT cost, bound, optimal, job FROM " + s + "._map_info");
  if (info.size() != 1 || info.isnull(0, 0)) return a;
  a.have_map = true;
  a.map_job = info.isnull(0, 3) ? 0 : info.int8(0, 3);
  a.cost = info.float8(0, 0);
  a.have_bound = !info.isnull(0, 1) && !info.isnull(0, 2);
  if (a.have_bound) {
    a.bound = info.float8(0, 1);
    a.optimal = info.boolean(0, 2);
  }
  if (!keys) {
    a.true_atoms = spi.query("SELECT coalesce(array_agg(atom ORDER BY atom), '{}') FROM " + s + "._map WHERE truth")
                       .int4_array(0, 0);
  } else {
    Rows t = spi.query(std::string("SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}'), ") + kKeyColumns + " FROM " +
                       s + "._map m JOIN " + s + "._atoms x ON x.id = m.atom WHERE m.truth");
    a.true_atoms = t.int4_array(0, 0);
    a.true_keys = keys_of(t.int4_array(0, 1), t.int4_array(0, 2), t.text(0, 3));
  }
  return a;
}

StoredNetwork read_stored_network(Spi& spi, const std::string& schema) {
  StoredNetwork n;
  const std::string s = qi(schema);
  const std::vector<bool> ok = have_columns(spi, {{s + "._atoms", "id:integer|pred:integer|args:integer[]"},
                                                  {s + "._clauses", "offsets:integer[]|lits:integer[]|weights:double precision[]"},
                                                  {s + "._clauses", "wcode:bytea"}});
  if (!ok[0] || !ok[1]) return n;
  Rows t = spi.query(std::string("SELECT count(*), coalesce(max(x.id), 0), ") + kKeyColumns + " FROM " + s + "._atoms x");
  if (t.int8(0, 0) != t.int4(0, 1)) return n;  // ids not 1..n: not a network this version stored
  n.atoms = keys_of(t.int4_array(0, 2), t.int4_array(0, 3), t.text(0, 4));
  const bool codes = ok[2];
  Rows c = spi.query("SELECT offsets, lits, weights, " + std::string(codes ? "wcode" : "NULL::bytea") + " FROM " + s +
                     "._clauses ORDER BY chunk");
  std::vector<double> w;
  for (size_t r = 0; r < c.size(); ++r) {
    const std::vector<int32_t> off = c.int4_array(r, 0), lits = c.int4_array(r, 1);
    const std::vector<double> dict = c.float8_array(r, 2);
    const std::string code = c.isnull(r, 3) ? "" : c.bytes(r, 3);
    const size_t nc = codes ? code.size() : dict.size();
    if (off.size() != nc + 1) return StoredNetwork();
    w.resize(nc);
    if (!codes) w = dict;
    else if (!chunks::decode_weights(dict.data(), dict.size(), reinterpret_cast<const uint8_t*>(code.data()), nc, w.data()))
      return StoredNetwork();
    for (size_t i = 0; i < nc; ++i) {
      if (off[i] < 0 || off[i] > off[i + 1] || static_cast<size_t>(off[i + 1]) > lits.size()) return StoredNetwork();
      n.clauses.add(lits.data() + off[i], static_cast<size_t>(off[i + 1] - off[i]), w[i]);
    }
  }
  n.have = true;
  return n;
}

namespace {

// The answers through a map from stored ids to new ones (0: gone).
void carry_by_ids(const StoredAnswer& answer, const std::vector<int32_t>& old_to_new, CarriedAnswer& c) {
  auto to_new = [&](int32_t a) { return a > 0 && static_cast<size_t>(a) < old_to_new.size() ? old_to_new[a] : 0; };
  c.have_map = answer.have_map;
  for (int32_t a : answer.true_atoms)
    if (const int32_t b = to_new(a); b > 0) c.true_atoms.push_back(b);
  c.have_marginals = answer.have_marginals;
  for (size_t i = 0; i < answer.marginal_atoms.size(); ++i)
    if (const int32_t b = to_new(answer.marginal_atoms[i]); b > 0) {
      c.marginal_atoms.push_back(b);
      c.marginal_probs.push_back(answer.marginal_probs[i]);
    }
  c.touched_known = true;
}

}  // namespace

CarriedAnswer carry_answer(const StoredAnswer& answer, const LiveRun& run, const StoredNetwork& before,
                           const ground::GroundOutput& out) {
  CarriedAnswer c;
  if (!answer.have()) return c;
  c.have = true;
  if (run.used && !run.built) {
    carry_by_ids(answer, run.old_to_new, c);
    c.touched = run.delta.touched_atoms;
    c.how = "live update";
    return c;
  }
  std::vector<ground::AtomKey> now;
  now.reserve(out.atoms.size());
  for (const ground::Atom& a : out.atoms) now.emplace_back(a.pred, a.args);
  if (before.have) {
    ground::NetworkDiff d = ground::diff_networks(before.atoms, before.clauses, now, out.network.clauses);
    carry_by_ids(answer, d.old_to_new, c);
    c.touched = std::move(d.touched);
    c.how = "compared";
    return c;
  }
  c.how = "by arguments";  // the MAP answer's true atoms only
  c.have_map = answer.have_map;
  const auto id_of = ground::index_atoms(now);
  for (const auto& k : answer.true_keys)
    if (auto it = id_of.find(k); it != id_of.end()) c.true_atoms.push_back(it->second);
  c.have = c.have_map;
  return c;
}

void store_carried(Spi& spi, const std::string& schema, const CarriedAnswer& carried) {
  if (!carried.have) return;
  const std::string t = qi(schema) + "._carried";
  spi.exec("CREATE TABLE " + t + " (atom int4 NOT NULL, truth boolean NOT NULL, touched boolean NOT NULL, probability float8)");
  spi.exec("INSERT INTO " + t + " SELECT a, bool_or(v), bool_or(u), max(p) FROM ("
           "SELECT unnest($1::int4[]), true, false, NULL::float8 UNION ALL SELECT unnest($2::int4[]), false, true, NULL "
           "UNION ALL SELECT x.a, false, false, x.p FROM unnest($3::int4[], $4::float8[]) x(a, p)) y(a, v, u, p) "
           "GROUP BY a",
           {int4_array_param(carried.true_atoms), int4_array_param(carried.touched),
            int4_array_param(carried.marginal_atoms), float8_array_param(carried.marginal_probs)});
}

std::string carried_json(const CarriedAnswer& carried, const StoredAnswer& answer) {
  if (!carried.have) return "null";
  std::string map = "null";
  if (carried.have_map)
    map = "{\"job\": " + std::to_string(answer.map_job) + ", \"true_atoms\": " + std::to_string(carried.true_atoms.size()) +
          ", \"cost\": " + json_num(answer.cost) +
          ", \"bound\": " + (answer.have_bound ? json_num(answer.bound) : "null") + ", \"optimal\": " +
          (answer.have_bound && answer.optimal ? "true" : "false") + "}";
  return "{\"how\": " + json_quote(carried.how) + ", \"touched_atoms\": " +
         (carried.touched_known ? std::to_string(carried.touched.size()) : "null") + ", \"map\": " + map +
         ", \"marginals\": " +
         (carried.have_marginals ? "{\"job\": " + std::to_string(answer.marginal_job) + ", \"atoms\": " +
                                       std::to_string(carried.marginal_atoms.size()) + "}"
                                 : std::string("null")) +
         "}";
}

}  // namespace mln::pg
