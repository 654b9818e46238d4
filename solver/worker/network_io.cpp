// Reading the ground network (binary COPY of the chunked clause rows) and
// writing the MAP state back (COPY text into _map).
#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace mln::worker {

Network read_network(Conn& c, const std::string& schema) {
  Network net;
  const std::string s = c.quote_ident(schema);
  Result n = c.exec("SELECT coalesce(max(id), 0) FROM " + s + "._atoms");
  net.num_atoms = static_cast<int32_t>(n.num(0, 0));
  net.is_query.assign(net.num_atoms + 1, 0);
  std::vector<std::pair<const char*, int32_t>> f;
  bool first = true;
  c.copy_out("COPY (SELECT id, is_query FROM " + s + "._atoms) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f)) {
                 int32_t id = binary::int4(f[0].first);
                 if (id > 0 && id <= net.num_atoms) net.is_query[id] = f[1].first[0] != 0;
               }
               first = false;
             });
  first = true;
  std::vector<int32_t> offs;
  ClauseSet& cs = net.clauses;
  c.copy_out("COPY (SELECT offsets, lits, weights FROM " + s + "._clauses ORDER BY chunk) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f)) {
                 offs.clear();
                 binary::int4_array(f[0].first, f[0].second, offs);
                 int64_t base = static_cast<int64_t>(cs.lits.size());
                 binary::int4_array(f[1].first, f[1].second, cs.lits);
                 binary::float8_array(f[2].first, f[2].second, cs.weights);
                 for (size_t i = 1; i < offs.size(); ++i) cs.offsets.push_back(base + offs[i]);
               }
               first = false;
             });
  if (cs.offsets.size() != cs.weights.size() + 1) throw DbError("corrupt ground network: offsets do not match weights");
  return net;
}

}  // namespace mln::worker
