// Reading heap tables into columns (see heap_io.hpp): scan_columns,
// scan_evidence, relation_columns.  Heap tables are read a page at a time
// (heap_page_reader.hpp), int columns at fixed offsets on two threads
// (heap_scan.hpp).
#include "pg/guard.hpp"
#include "pg/heap_io.hpp"
#include "pg/heap_page_reader.hpp"
#include "pg/heap_scan.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

extern "C" {
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"
}

namespace mln::pg {

namespace {

// Attribute numbers and types of the requested columns, validated.
std::vector<std::pair<AttrNumber, Oid>> resolve(Oid relid, const std::vector<std::string>& columns) {
  std::string relname = pg_call([&] {
    char* n = get_rel_name(relid);
    return std::string(n ? n : "");
  });
  if (relname.empty())
    throw UserError{ERRCODE_UNDEFINED_TABLE, "relation with OID " + std::to_string(relid) + " does not exist", "", ""};
  char kind = pg_call([&] { return get_rel_relkind(relid); });
  if (kind != RELKIND_RELATION && kind != RELKIND_MATVIEW)
    throw UserError{ERRCODE_WRONG_OBJECT_TYPE, "\"" + relname + "\" is not a table or materialized view",
                    "GPU operators scan heap tables directly", "materialize the view first"};
  bool ok = pg_call([&] { return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK; });
  if (!ok) throw UserError{ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied for table " + relname, "", ""};
  std::vector<std::pair<AttrNumber, Oid>> out;
  for (const auto& c : columns) {
    AttrNumber att = pg_call([&] { return get_attnum(relid, c.c_str()); });
    if (att == InvalidAttrNumber || att < 0)
      throw UserError{ERRCODE_UNDEFINED_COLUMN, "column \"" + c + "\" of relation \"" + relname + "\" does not exist",
                      "", ""};
    Oid typ = pg_call([&] { return get_atttype(relid, att); });
    if (typ != INT4OID && typ != INT2OID) {
      std::string tname = pg_call([&] { return std::string(format_type_be(typ)); });
      throw UserError{ERRCODE_DATATYPE_MISMATCH,
                      "column \"" + c + "\" of relation \"" + relname + "\" has type " + tname +
                          ", but GPU operators take integer columns",
                      "", "use int4 (or int2) columns, e.g. dictionary-encode text with a lookup table"};
    }
    out.emplace_back(att, typ);
  }
  return out;
}

// Scans a table with `lock`, reading attributes `atts` (1-based) of each
// visible row, and calls row(values, isnull) (one entry per attribute in
// `atts`) until it returns false; reserve(rows) is called once with an
// estimate of the table's rows.  Heap tables are read a page at a time
// (PageReader: one pg_call per page, not per row); other table access
// methods through the table AM's scan.  The lock is kept to the end of the
// transaction.  row and reserve run outside PostgreSQL's error handling and
// may throw.
template <typename Row, typename Reserve>
void scan_rows(Oid relid, LOCKMODE lock, const std::vector<AttrNumber>& atts, Row&& row, Reserve&& reserve) {
  const int n = static_cast<int>(atts.size());
  Relation rel = pg_call([&] { return table_open(relid, lock); });
  if (rel->rd_rel->relam == HEAP_TABLE_AM_OID) {
    std::optional<PageReader> rd;
    pg_call([&] { rd.emplace(rel, GetActiveSnapshot(), atts.data(), n); });
    bool first = true, more = true;
    while (more && pg_call([&] { return rd->next(); })) {
      // The first page's rows times the pages, capped (a table of mostly
      // dead pages would otherwise reserve far too much).
      if (first) reserve(std::min<size_t>(static_cast<size_t>(rd->rows()) * rd->pages(), size_t{1} << 26));
      first = false;
      for (int r = 0; r < rd->rows() && more; ++r) more = row(rd->values(r), rd->nulls(r));
    }
  } else {
    AttrNumber natts = 0;
    for (AttrNumber a : atts) natts = std::max(natts, a);
    TableScanDesc scan = pg_call([&] { return table_beginscan(rel, GetActiveSnapshot(), 0, nullptr); });
    TupleTableSlot* slot = pg_call([&] { return table_slot_create(rel, nullptr); });
    std::vector<Datum> v(n);
    std::unique_ptr<bool[]> nl(new bool[n > 0 ? n : 1]);
    size_t seen = 0;
    while (pg_call([&] { return table_scan_getnextslot(scan, ForwardScanDirection, slot); })) {
      pg_call([&] { slot_getsomeattrs(slot, natts); });
      for (int k = 0; k < n; ++k) {
        v[k] = slot->tts_values[atts[k] - 1];
        nl[k] = slot->tts_isnull[atts[k] - 1];
      }
      if (!row(v.data(), nl.get())) break;
      if (++seen % 65536 == 0) check_interrupts();
    }
    pg_call([&] {
      ExecDropSingleTupleTableSlot(slot);
      table_endscan(scan);
    });
  }
  pg_call([&] { table_close(rel, NoLock); });
}

}  // namespace

Oid relation_by_name(const std::string& qualified_table, LOCKMODE lock) {
  return pg_call([&] {
    List* names_list = stringToQualifiedNameList(qualified_table.c_str());
    return RangeVarGetRelid(makeRangeVarFromNameList(names_list), lock, false);
  });
}

std::vector<std::string> relation_columns(Oid relid) {
  return pg_call([&] {
    std::vector<std::string> cols;
    Relation rel = table_open(relid, AccessShareLock);
    TupleDesc td = RelationGetDescr(rel);
    for (int i = 0; i < td->natts; ++i) {
      Form_pg_attribute a = TupleDescAttr(td, i);
      if (!a->attisdropped) cols.push_back(NameStr(a->attname));
    }
    table_close(rel, AccessShareLock);
    return cols;
  });
}

gpu::HostTable scan_columns(Oid relid, const std::vector<std::string>& columns) {
  bool has_null = false;
  gpu::HostTable t = scan_columns_or_null(relid, columns, has_null);
  if (has_null)
    throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "GPU operators do not accept NULL values", "",
                    "filter the NULLs out first (e.g. into a table with NOT NULL columns)"};
  return t;
}

gpu::HostTable scan_columns_or_null(Oid relid, const std::vector<std::string>& columns, bool& has_null) {
  auto atts = resolve(relid, columns);
  gpu::HostTable t;
  t.cols.resize(columns.size());
  std::vector<AttrNumber> nums;
  for (auto& a : atts) nums.push_back(a.first);
  has_null = false;
  if (!scan_fixed_columns(relid, atts, nums, t, has_null)) {
    scan_rows(
        relid, AccessShareLock, nums,
        [&](const Datum* v, const bool* isnull) {
          for (size_t k = 0; k < atts.size(); ++k) {
            if (isnull[k]) {
              has_null = true;
              return false;
            }
            t.cols[k].push_back(atts[k].second == INT4OID ? DatumGetInt32(v[k]) : DatumGetInt16(v[k]));
          }
          return true;
        },
        [&](size_t est) {
          for (auto& c : t.cols) c.reserve(est);
        });
  }
  return t;
}

void scan_evidence(const std::string& qualified_table, const std::vector<std::string>& arg_columns,
                   std::vector<std::vector<int32_t>>& args, std::vector<uint8_t>& truth, std::vector<double>& prior) {
  Oid relid = relation_by_name(qualified_table, AccessShareLock);
  const int arity = static_cast<int>(arg_columns.size());
  std::vector<std::string> names = arg_columns;
  names.push_back("truth");
  names.push_back("prior");
  std::vector<AttrNumber> att;
  for (const auto& c : names) {
    AttrNumber a = pg_call([&] { return get_attnum(relid, c.c_str()); });
    if (a <= 0)
      throw UserError{ERRCODE_UNDEFINED_COLUMN, "evidence table " + qualified_table + " has no column \"" + c + "\"", "", ""};
    att.push_back(a);
  }
  args.assign(static_cast<size_t>(arity), {});
  bool null_arg = false;
  scan_rows(
      relid, NoLock, att,  // locked by relation_by_name
      [&](const Datum* v, const bool* isnull) {
        for (int k = 0; k < arity; ++k) {
          null_arg |= isnull[k];
          args[k].push_back(DatumGetInt32(v[k]));
        }
        truth.push_back(!isnull[arity] && DatumGetBool(v[arity]) ? 1 : 0);
        prior.push_back(isnull[arity + 1] ? std::nan("") : DatumGetFloat8(v[arity + 1]));
        return !null_arg;
      },
      [&](size_t est) {
        for (auto& c : args) c.reserve(est);
        truth.reserve(est);
        prior.reserve(est);
      });
  if (null_arg)
    throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "evidence table " + qualified_table + " has a NULL argument", "", ""};
}

}  // namespace mln::pg
