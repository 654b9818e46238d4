// Reading the ground network: binary COPY of the atoms and of the chunked
// clause rows, their arrays as raw little-endian bytes (mln._array_le).
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
  // The chunk arrays travel as raw little-endian bytes (mln._array_le): one
  // memcpy per chunk at each end instead of a send function per element.
  c.copy_out("COPY (SELECT mln._array_le(offsets), mln._array_le(lits), mln._array_le(weights) FROM " + s +
                 "._clauses ORDER BY chunk) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f)) {
                 if (f.size() != 3 || f[0].second < 0 || f[1].second < 0 || f[2].second < 0)
                   throw DbError("corrupt ground network: a clause chunk row with NULLs");
                 offs.clear();
                 binary::le_int4s(f[0].first, f[0].second, offs);
                 const size_t lits_before = cs.lits.size(), weights_before = cs.weights.size();
                 binary::le_int4s(f[1].first, f[1].second, cs.lits);
                 binary::le_float8s(f[2].first, f[2].second, cs.weights);
                 const int64_t base = static_cast<int64_t>(lits_before);
                 if (offs.empty() || offs.size() != cs.weights.size() - weights_before + 1 || offs.front() != 0 ||
                     static_cast<size_t>(offs.back()) != cs.lits.size() - lits_before)
                   throw DbError("corrupt ground network: a clause chunk's offsets do not match its literals");
                 for (size_t i = 1; i < offs.size(); ++i) cs.offsets.push_back(base + offs[i]);
               }
               first = false;
             });
  if (cs.offsets.size() != cs.weights.size() + 1) throw DbError("corrupt ground network: offsets do not match weights");
  return net;
}

}  // namespace mln::worker
