// SQL-callable relational operators on ordinary tables: mln.gpu_select,
// mln.gpu_join, mln.gpu_anti_join, mln.gpu_distinct and mln.gpu_plan (a
// chain of steps run on the engine without going back to the heap).
// Each reads heap tables straight into columnar buffers and writes its
// result into a new table with table_multi_insert.
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/engine.hpp"
#include "pg/heap_io.hpp"
#include "pg/spi.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <vector>

extern "C" {
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
PG_FUNCTION_INFO_V1(mln_gpu_select);
PG_FUNCTION_INFO_V1(mln_gpu_join);
PG_FUNCTION_INFO_V1(mln_gpu_distinct);
PG_FUNCTION_INFO_V1(mln_gpu_plan);
}

namespace mln::pg {
namespace {

using gpu::CmpOp;

// A relation on the engine with named columns.
struct Named {
  gpu::Relation rel;
  std::vector<std::string> names;
  int col(const std::string& n, const std::string& what) const {
    auto it = std::find(names.begin(), names.end(), n);
    if (it == names.end())
      throw UserError{ERRCODE_UNDEFINED_COLUMN, "column \"" + n + "\" does not exist in " + what, "",
                      "available columns: " + join_names()};
    return static_cast<int>(it - names.begin());
  }
  std::string join_names() const {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }
};

// Tokens of filter and plan-step text: identifiers ("quoted" allowed),
// integers, operators and commas.
std::vector<std::string> tokenize(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    if (c == '"') {
      size_t j = s.find('"', i + 1);
      if (j == std::string::npos) throw UserError{ERRCODE_SYNTAX_ERROR, "unterminated quoted identifier in \"" + s + "\"", "", ""};
      out.push_back("\"" + s.substr(i + 1, j - i - 1));
      i = j + 1;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || ((c == '-' || c == '+') && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    } else if (std::string("<>!=").find(c) != std::string::npos) {
      size_t j = i + 1;
      if (j < s.size() && (s[j] == '=' || (c == '<' && s[j] == '>'))) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    } else if (c == ',') {
      out.push_back(",");
      ++i;
    } else {
      throw UserError{ERRCODE_SYNTAX_ERROR, std::string("unexpected character '") + c + "' in \"" + s + "\"", "", ""};
    }
  }
  return out;
}

bool is_int(const std::string& t) {
  size_t b = (t[0] == '-' || t[0] == '+') ? 1 : 0;
  return b < t.size() && std::all_of(t.begin() + b, t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// An identifier token as a column name (unquoted names fold to lower case,
// as SQL does).
std::string ident(const std::string& t) {
  if (!t.empty() && t[0] == '"') return t.substr(1);
  std::string s = t;
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

CmpOp parse_op(const std::string& t, const std::string& text) {
  if (t == "=") return CmpOp::EQ;
  if (t == "<>" || t == "!=") return CmpOp::NE;
  if (t == "<") return CmpOp::LT;
  if (t == "<=") return CmpOp::LE;
  if (t == ">") return CmpOp::GT;
  if (t == ">=") return CmpOp::GE;
  throw UserError{ERRCODE_SYNTAX_ERROR, "expected a comparison operator at \"" + t + "\" in \"" + text + "\"", "",
                  "conditions look like: a >= 10 AND b <> c"};
}

// "a >= 10 AND b = c" -> predicates over `in`'s columns.
std::vector<gpu::Predicate> parse_filter(const std::string& text, const Named& in, const std::string& what) {
  std::vector<gpu::Predicate> preds;
  auto tk = tokenize(text);
  size_t i = 0;
  while (i < tk.size()) {
    if (i + 3 > tk.size())
      throw UserError{ERRCODE_SYNTAX_ERROR, "incomplete condition in \"" + text + "\"", "",
                      "conditions look like: a >= 10 AND b <> c"};
    gpu::Predicate p;
    p.col = in.col(ident(tk[i]), what);
    p.op = parse_op(tk[i + 1], text);
    if (is_int(tk[i + 2])) {
      long long v = std::stoll(tk[i + 2]);
      if (v < INT32_MIN || v > INT32_MAX)
        throw UserError{ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, "constant " + tk[i + 2] + " is out of int4 range", "", ""};
      p.rhs_const = static_cast<int32_t>(v);
    } else {
      p.rhs_is_col = true;
      p.rhs_col = in.col(ident(tk[i + 2]), what);
    }
    preds.push_back(p);
    i += 3;
    if (i < tk.size()) {
      std::string a = tk[i];
      for (auto& ch : a) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      if (a != "AND") throw UserError{ERRCODE_SYNTAX_ERROR, "expected AND at \"" + tk[i] + "\" in \"" + text + "\"", "", ""};
      ++i;
    }
  }
  return preds;
}


std::vector<std::string> text_array_arg(FunctionCallInfo fcinfo, int i) {
  if (PG_ARGISNULL(i)) return {};
  return pg_call([&] {
    std::vector<std::string> v;
    ArrayType* a = PG_GETARG_ARRAYTYPE_P(i);
    Datum* elems;
    bool* nulls;
    int n;
    deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
    for (int k = 0; k < n; ++k)
      if (!nulls[k]) v.push_back(text_to_cstring(reinterpret_cast<::text*>(DatumGetPointer(elems[k]))));
    return v;
  });
}

std::string rel_name(Oid relid) {
  return pg_call([&] { return std::string(DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)))); });
}

// Where an operator call spends its time: scanning the heap, the copy to
// the engine, writing the result table (the download from the engine runs
// beside it and is reported apart), and the rest, the operators.  One per
// SQL-callable operator function, current (g_timer) for its duration;
// reported at DEBUG1 (SET client_min_messages = debug1 to see it).
struct CallTimer;
CallTimer* g_timer = nullptr;
struct CallTimer {
  using Clock = std::chrono::steady_clock;
  const char* fn;
  Clock::time_point start = Clock::now();
  double scan = 0, upload = 0, download = 0, write = 0;
  explicit CallTimer(const char* f) : fn(f) { g_timer = this; }
  ~CallTimer() { g_timer = nullptr; }
  static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
  void done() const {
    const double total = since(start);
    pg_call([&] {
      ereport(DEBUG1, (errmsg_internal("pg_mln: %s: %.3f s (scan %.3f s, upload %.3f s, operators %.3f s, write "
                                       "%.3f s, with the download beside it %.3f s)",
                                       fn, total, scan, upload, total - scan - upload - write, write, download)));
    });
  }
};

// A table's columns read into host memory, before an engine is chosen.
struct Scanned {
  gpu::HostTable host;
  std::vector<std::string> names;
};

// Scans `columns` (all columns when empty) of a table.
Scanned scan(Oid relid, std::vector<std::string> columns) {
  const auto t0 = CallTimer::Clock::now();
  if (columns.empty()) columns = relation_columns(relid);
  Scanned s{scan_columns(relid, columns), columns};
  if (g_timer) g_timer->scan += CallTimer::since(t0);
  return s;
}

// Copies a scanned table onto the engine.
Named upload(gpu::Engine& eng, Scanned&& s) {
  const auto t0 = CallTimer::Clock::now();
  Named n{eng.upload(s.host), std::move(s.names)};
  s.host = gpu::HostTable{};
  if (g_timer) g_timer->upload += CallTimer::since(t0);
  return n;
}

// scan + upload, for a table read after the engine is chosen (gpu_plan's
// joins).  The operator functions themselves scan their inputs first and
// ask for the engine after: they start CUDA's context creation
// (start_device_warmup) before the scan, so the ~0.3 s it takes in a new
// backend overlaps the scan instead of adding to it.
Named load(gpu::Engine& eng, Oid relid, std::vector<std::string> columns) {
  return upload(eng, scan(relid, std::move(columns)));
}

// Writes a named relation to a new table; returns the row count.
uint64_t store(gpu::Engine& eng, const Named& n, const std::string& target) {
  // Disambiguate duplicate output names (a join of two tables with an "id").
  std::vector<std::string> names = n.names;
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i]) names[i] += "_" + std::to_string(i + 1);
  // The result streams out in pieces (RowSource), each downloaded and then
  // written as pages, so the host never holds all of it; write_table
  // downloads the next piece while it writes one (on its helper thread:
  // the engine is not used by this thread meanwhile).
  const auto t0 = CallTimer::Clock::now();
  double download = 0;
  RowSource src{n.rel.rows(), n.rel.ncols(), [&](size_t row0, size_t m, int32_t* const* dst) {
                  const auto d0 = CallTimer::Clock::now();
                  eng.download_rows(n.rel, row0, m, dst);
                  download += CallTimer::since(d0);
                }};
  const uint64_t rows = write_table(target, names, src);
  if (g_timer) {
    g_timer->download += download;
    g_timer->write += CallTimer::since(t0);
  }
  return rows;
}

// Join of `l` with `r` on named keys; all columns of both sides are kept.
Named join(gpu::Engine& eng, const Named& l, const Named& r, const std::vector<std::string>& lk,
           const std::vector<std::string>& rk, const std::string& lwhat, const std::string& rwhat, bool anti) {
  if (lk.size() != rk.size() || lk.empty())
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE,
                    "join key lists must be non-empty and of equal length (got " + std::to_string(lk.size()) + " and " +
                        std::to_string(rk.size()) + ")",
                    "", ""};
  std::vector<int> lki, rki;
  for (const auto& k : lk) lki.push_back(l.col(k, lwhat));
  for (const auto& k : rk) rki.push_back(r.col(k, rwhat));
  Named out;
  if (anti) {
    out.rel = eng.anti_join(l.rel, r.rel, lki, rki);
    out.names = l.names;
    return out;
  }
  std::vector<gpu::OutCol> oc;
  for (int c = 0; c < l.rel.ncols(); ++c) { oc.push_back({0, c}); out.names.push_back(l.names[c]); }
  for (int c = 0; c < r.rel.ncols(); ++c) { oc.push_back({1, c}); out.names.push_back(r.names[c]); }
  out.rel = eng.join(l.rel, r.rel, lki, rki, oc);
  return out;
}

Named project(gpu::Engine& eng, const Named& in, const std::vector<std::string>& cols, const std::string& what) {
  Named out;
  std::vector<int> idx;
  for (const auto& c : cols) {
    idx.push_back(in.col(c, what));
    out.names.push_back(c);
  }
  out.rel = eng.project(in.rel, idx);
  return out;
}

std::string device_arg(FunctionCallInfo fcinfo, int i) { return PG_ARGISNULL(i) ? "" : text_arg(fcinfo, i); }

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.gpu_select(source regclass, filter text, target text, columns text[] default null, device text default null)
Datum mln_gpu_select(PG_FUNCTION_ARGS) {
  uint64_t n = 0;
  MLN_GUARDED({
    CallTimer timed("mln.gpu_select");
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "source, filter and target must not be null", "", ""};
    Oid src = PG_GETARG_OID(0);
    std::string filter = text_arg(fcinfo, 1), target = text_arg(fcinfo, 2);
    auto cols = text_array_arg(fcinfo, 3);
    const std::string dev = device_arg(fcinfo, 4);
    start_device_warmup(dev);
    std::string what = rel_name(src);
    Scanned s = scan(src, {});
    mln::gpu::Engine& eng = engine_for(dev);
    Named in = upload(eng, std::move(s));
    Named sel{eng.select(in.rel, parse_filter(filter, in, what)), in.names};
    n = store(eng, cols.empty() ? sel : project(eng, sel, cols, what), target);
    timed.done();
  });
  PG_RETURN_INT64(static_cast<int64>(n));
}

// mln.gpu_join(left regclass, right regclass, left_keys text[], right_keys text[], target text,
//              anti boolean default false, device text default null)
Datum mln_gpu_join(PG_FUNCTION_ARGS) {
  uint64_t n = 0;
  MLN_GUARDED({
    CallTimer timed("mln.gpu_join");
    for (int i = 0; i < 6; ++i)
      if (PG_ARGISNULL(i))
        throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "mln.gpu_join: only device may be null", "", ""};
    Oid l = PG_GETARG_OID(0), r = PG_GETARG_OID(1);
    auto lk = text_array_arg(fcinfo, 2), rk = text_array_arg(fcinfo, 3);
    std::string target = text_arg(fcinfo, 4);
    bool anti = PG_GETARG_BOOL(5);
    const std::string dev = device_arg(fcinfo, 6);
    start_device_warmup(dev);
    std::string lw = rel_name(l), rw = rel_name(r);
    Scanned ls = scan(l, {}), rs = scan(r, {});
    mln::gpu::Engine& eng = engine_for(dev);
    Named ln = upload(eng, std::move(ls)), rn = upload(eng, std::move(rs));
    n = store(eng, join(eng, ln, rn, lk, rk, lw, rw, anti), target);
    timed.done();
  });
  PG_RETURN_INT64(static_cast<int64>(n));
}

// mln.gpu_distinct(source regclass, target text, columns text[] default null, device text default null)
Datum mln_gpu_distinct(PG_FUNCTION_ARGS) {
  uint64_t n = 0;
  MLN_GUARDED({
    CallTimer timed("mln.gpu_distinct");
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "source and target must not be null", "", ""};
    Oid src = PG_GETARG_OID(0);
    std::string target = text_arg(fcinfo, 1);
    auto cols = text_array_arg(fcinfo, 2);
    const std::string dev = device_arg(fcinfo, 3);
    start_device_warmup(dev);
    Scanned s = scan(src, cols);
    mln::gpu::Engine& eng = engine_for(dev);
    Named in = upload(eng, std::move(s));
    n = store(eng, Named{eng.distinct(in.rel), in.names}, target);
    timed.done();
  });
  PG_RETURN_INT64(static_cast<int64>(n));
}

// mln.gpu_plan(source regclass, steps text[], target text, device text default null)
// Steps, applied in order on the engine:
//   'select <cond> [AND <cond>]...'
//   'join <table> on <lcol> = <rcol> [, <lcol> = <rcol>]...'
//   'antijoin <table> on <lcol> = <rcol> [, ...]'
//   'distinct'
//   'project <col> [, <col>]...'
Datum mln_gpu_plan(PG_FUNCTION_ARGS) {
  uint64_t n = 0;
  MLN_GUARDED({
    CallTimer timed("mln.gpu_plan");
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "source, steps and target must not be null", "", ""};
    Oid src = PG_GETARG_OID(0);
    auto steps = text_array_arg(fcinfo, 1);
    std::string target = text_arg(fcinfo, 2);
    const std::string dev = device_arg(fcinfo, 3);
    start_device_warmup(dev);
    Scanned s = scan(src, {});
    mln::gpu::Engine& eng = engine_for(dev);
    Named cur = upload(eng, std::move(s));
    std::string what = "the plan's intermediate result";
    for (size_t si = 0; si < steps.size(); ++si) {
      check_interrupts();
      const std::string& st = steps[si];
      std::string where = "step " + std::to_string(si + 1) + " (\"" + st + "\")";
      auto sp = st.find_first_of(" \t");
      std::string verb = st.substr(0, sp), rest = sp == std::string::npos ? "" : st.substr(sp + 1);
      for (auto& ch : verb) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (verb == "select") {
        cur.rel = eng.select(cur.rel, parse_filter(rest, cur, what));
      } else if (verb == "distinct") {
        cur.rel = eng.distinct(cur.rel);
      } else if (verb == "project") {
        std::vector<std::string> cols;
        for (const auto& t : tokenize(rest))
          if (t != ",") cols.push_back(ident(t));
        cur = project(eng, cur, cols, what);
      } else if (verb == "join" || verb == "antijoin") {
        auto tk = tokenize(rest);
        if (tk.size() < 5 || ident(tk[1]) != "on")
          throw UserError{ERRCODE_SYNTAX_ERROR, where + ": expected '" + verb + " <table> on <a> = <b>[, ...]'", "", ""};
        Oid rid = pg_call([&] {
          return DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(tk[0].c_str())));
        });
        Named rn = load(eng, rid, {});
        std::vector<std::string> lk, rk;
        for (size_t i = 2; i < tk.size();) {
          if (i + 3 > tk.size() || tk[i + 1] != "=")
            throw UserError{ERRCODE_SYNTAX_ERROR, where + ": join keys look like a = b, c = d", "", ""};
          lk.push_back(ident(tk[i]));
          rk.push_back(ident(tk[i + 2]));
          i += 3;
          if (i < tk.size() && tk[i] == ",") ++i;
        }
        cur = join(eng, cur, rn, lk, rk, what, rel_name(rid), verb == "antijoin");
      } else {
        throw UserError{ERRCODE_SYNTAX_ERROR, where + ": unknown step \"" + verb + "\"", "",
                        "steps are select, join, antijoin, distinct and project"};
      }
    }
    n = store(eng, cur, target);
    timed.done();
  });
  PG_RETURN_INT64(static_cast<int64>(n));
}
