// Reading the ground network: binary COPY of the atoms and of the chunked
// clause rows, their arrays as raw little-endian bytes (mln._array_le).
#include <algorithm>
#include <string>

#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace mln::worker {

Network read_network(Conn& c, const std::string& schema) {
  Network net;
  const std::string s = c.quote_ident(schema);
  // _atoms has no index (it is read whole): the atom count is the largest id seen.
  std::vector<std::pair<const char*, int32_t>> f;
  bool first = true;
  net.num_atoms = 0;
  net.is_query.assign(1, 0);
  c.copy_out("COPY (SELECT id, is_query FROM " + s + "._atoms) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f)) {
                 const int32_t id = binary::int4(f[0].first);
                 if (id <= 0) throw DbError("corrupt ground network: atom id " + std::to_string(id));
                 if (static_cast<size_t>(id) >= net.is_query.size())
                   net.is_query.resize(std::max<size_t>(static_cast<size_t>(id) + 1, net.is_query.size() * 2), 0);
                 net.num_atoms = std::max(net.num_atoms, id);
                 net.is_query[id] = f[1].first[0] != 0;
               }
               first = false;
             });
  net.is_query.resize(static_cast<size_t>(net.num_atoms) + 1);
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
