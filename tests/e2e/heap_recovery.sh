#!/usr/bin/env bash
# Tables written as raw heap pages (an operator's result table, a program's
# ground atoms: extension/pg/heap_page_writer.cpp) survive a crash.  They are
# written after a checkpoint; the server is then stopped with
# `pg_ctl -m immediate` (no shutdown checkpoint) and their data files are
# deleted, so the rows can only come back through WAL replay of their
# records (heap multi-insert records, one per page).  A second round
# checkpoints first, so they come back from the data files.  Last, under
# wal_level = logical, a result's rows reach a logical decoding slot.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_heap
dropdb --if-exists "$PGDATABASE"; createdb "$PGDATABASE"
q() { psql -qXAt -c "$1"; }
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION pg_mln;
CHECKPOINT;
SELECT setseed(0.25);
CREATE TABLE l AS SELECT (random() * 20000)::int4 AS k, g::int4 AS v FROM generate_series(1, 40000) g;
CREATE TABLE r AS SELECT (random() * 20000)::int4 AS k, g::int4 AS w FROM generate_series(1, 40000) g;
SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'j', device => 'cpu');
SELECT mln.gpu_select('l', 'k < 5000', 's', device => 'cpu');
SELECT mln.create_program('smoke', pg_read_file('$DATA/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file('$DATA/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT mln.ground('smoke', 'cpu');
SQL
check "setup through SQL" test $? -eq 0
# A digest of every row, in a fixed order, of what was written raw.
digest() {
  q "SELECT md5(string_agg(t::text, ';' ORDER BY t::text)) FROM j AS t" 
  q "SELECT md5(string_agg(t::text, ';' ORDER BY t::text)) FROM s AS t"
  q "SELECT md5(string_agg(t::text, ';' ORDER BY t::text)) FROM mln.ground_atoms('smoke') AS t"
}
expect_join=$(q "SELECT md5(string_agg(t::text, ';' ORDER BY t::text)) FROM (SELECT l.k, l.v, r.k, r.w FROM l JOIN r ON l.k = r.k) AS t")
before=$(digest)
check "join result equals SQL's before the crash" test "$(echo "$before" | head -1)" = "$expect_join"
check "rows were written (join: $(q "SELECT count(*) FROM j"))" test "$(q "SELECT count(*) > 10000 FROM j")" = t
# amcheck's heap verifier: page layout, line pointers, tuple headers, xmin.
q "CREATE EXTENSION IF NOT EXISTS amcheck" >/dev/null
atoms_tab="$(q "SELECT schema_name FROM mln.programs WHERE name = 'smoke'")._atoms"
for t in j s "$atoms_tab"; do
  check "verify_heapam finds nothing wrong in $t" \
    test "$(q "SELECT count(*) FROM verify_heapam('$t'::regclass, check_toast => true)")" = 0
done

restart() {  # mode (immediate: a crash) [nofiles: delete $files while down]
  if [ "$(id -u)" -eq 0 ]; then
    su postgres -s /bin/bash -c "'$PGBIN_DIR/pg_ctl' -D '$root/build/pgdata' -m $1 -w stop" >/dev/null
  else
    "$PGBIN_DIR/pg_ctl" -D "$root/build/pgdata" -m "$1" -w stop >/dev/null
  fi
  if [ "${2:-}" = nofiles ]; then
    # shellcheck disable=SC2086
    rm -f $files
  fi
  bash "$root/scripts/cluster.sh" start >/dev/null
}
PGBIN_DIR=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
[ -x "$PGBIN_DIR/pg_ctl" ] || PGBIN_DIR=/usr/lib/postgresql/15/bin

files=$(q "SELECT string_agg(current_setting('data_directory') || '/' || pg_relation_filepath(c), ' ')
           FROM unnest(ARRAY['j', 's', (SELECT schema_name FROM mln.programs WHERE name = 'smoke') || '._atoms']) AS c")
check "raw-written tables have data files" test -n "$files"
restart immediate nofiles
check "after a crash that lost their files: the same rows (WAL replay)" test "$(digest)" = "$before"
# (amcheck's own commit may not have survived: synchronous_commit = off)
q "CREATE EXTENSION IF NOT EXISTS amcheck" >/dev/null
for t in j s "$atoms_tab"; do
  check "verify_heapam finds nothing wrong in $t after replay" \
    test "$(q "SELECT count(*) FROM verify_heapam('$t'::regclass, check_toast => true)")" = 0
done
q "CHECKPOINT" >/dev/null
restart immediate
check "after a checkpoint and a crash: the same rows" test "$(digest)" = "$before"
# Rows written raw are ordinary rows: they can be updated and vacuumed.
q "UPDATE j SET w = w + 1 WHERE k < 100" >/dev/null
q "VACUUM j" >/dev/null
check "update and vacuum on a raw-written table" \
  test "$(q "SELECT count(*) FROM j")" = "$(q "SELECT count(*) FROM l JOIN r ON l.k = r.k")"
# After the vacuum, j's pages are all-visible and hold items that are not
# rows (unused slots, HOT redirects): the page decoders skip them.
q "CREATE EXTENSION IF NOT EXISTS pg_visibility" >/dev/null
check "vacuumed j: all-visible pages with items that are not rows" \
  test "$(q "SELECT (SELECT all_visible > 0 FROM pg_visibility_map_summary('j'))
                AND (SELECT sum(last) > (SELECT count(*) FROM j)
                       FROM (SELECT max((ctid::text::point)[1]) AS last FROM j GROUP BY (ctid::text::point)[0]) AS p)")" = t
q "SELECT mln.gpu_select('j', 'k >= 0', 'j_scanned', device => 'cpu')" >/dev/null
check "scan of the vacuumed j: the same rows" \
  test "$(q "SELECT md5(string_agg(t::text, ';' ORDER BY t::text)) FROM j_scanned AS t")" = \
       "$(q "SELECT md5(string_agg(t::text, ';' ORDER BY t::text)) FROM j AS t WHERE k >= 0")"

# Logical decoding sees every row of a result table (written then through
# heap_multi_insert: raw pages would carry no row for a decoder).
q "ALTER SYSTEM SET wal_level = logical" >/dev/null
restart fast
# A slot decodes flushed WAL only: commits are flushed at once here.
export PGOPTIONS="-c synchronous_commit=on"
q "SELECT 'slot' FROM pg_create_logical_replication_slot('mln_e2e_slot', 'test_decoding')" >/dev/null
q "SELECT mln.gpu_select('l', 'k < 3000', 's_logical', device => 'cpu')" >/dev/null
decoded=$(q "SELECT count(*) FROM pg_logical_slot_get_changes('mln_e2e_slot', NULL, NULL)
             WHERE data LIKE 'table public.s_logical: INSERT:%'")
check "wal_level = logical: each result row decoded ($decoded)" \
  test "$decoded" = "$(q "SELECT count(*) FROM l WHERE k < 3000")"
q "SELECT pg_drop_replication_slot('mln_e2e_slot')" >/dev/null
q "ALTER SYSTEM RESET wal_level" >/dev/null
unset PGOPTIONS
restart fast
dropdb "$PGDATABASE"
finish
