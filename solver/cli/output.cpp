// MAP output in Tuffy's format: Pred("A", "B"), one true query atom a line.
#include "cli/output.hpp"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "cli/embedded.hpp"
#include "worker/pq.hpp"

namespace mln::cli {

std::string format_arg(const std::string& v) {
  if (!v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) && v.find(' ') == std::string::npos) return v;
  std::string o = "\"";
  for (unsigned char c : v) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

void write_map_output(mln::worker::Conn& c, const std::string& program, const std::string& path, bool gz) {
  // The worker materialises the decoded answer as <schema>.map_result when it
  // finishes a job; reading it avoids decoding the arguments a second time.
  mln::worker::Result t = c.exec(
      "SELECT quote_ident(schema_name), to_regclass(quote_ident(schema_name) || '.map_result') IS NOT NULL "
      "FROM mln.programs WHERE name = $1",
      {program});
  const std::string source = t.rows() == 1 && t.get(0, 1) == "t" ? t.get(0, 0) + ".map_result" : "mln.map($1)";
  mln::worker::Result r = c.exec(
      "SELECT predicate, array_to_json(arguments)::text FROM " + source + " WHERE truth ORDER BY 1, 2",
      source == "mln.map($1)" ? std::vector<std::string>{program} : std::vector<std::string>{});
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write output file " + path);
  for (int i = 0; i < r.rows(); ++i) {
    // arguments arrive as a JSON array of strings: decode it.
    std::string js = r.get(i, 1), line = r.get(i, 0) + "(";
    std::vector<std::string> args;
    for (size_t p = 0; p < js.size(); ++p) {
      if (js[p] != '"') continue;
      std::string s;
      for (++p; p < js.size() && js[p] != '"'; ++p) {
        if (js[p] == '\\' && p + 1 < js.size()) {
          char e = js[++p];
          if (e == 'n') s += '\n';
          else if (e == 't') s += '\t';
          else if (e == 'r') s += '\r';
          else if (e == 'u' && p + 4 < js.size()) { s += static_cast<char>(std::stoi(js.substr(p + 1, 4), nullptr, 16)); p += 4; }
          else s += e;
        } else {
          s += js[p];
        }
      }
      args.push_back(s);
    }
    for (size_t k = 0; k < args.size(); ++k) line += (k ? ", " : "") + format_arg(args[k]);
    f << line << ")\n";
  }
  f.close();
  if (!f) throw std::runtime_error("error writing output file " + path);
  if (gz && run_shell("gzip -f " + shq(path), false) != 0) throw std::runtime_error("gzip failed for " + path);
}

}  // namespace mln::cli
