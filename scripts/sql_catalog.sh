#!/usr/bin/env bash
# Prints a sorted, canonical description of everything extension pg_mln
# holds in database DBNAME, one fact per line: two databases whose outputs
# are equal have the same extension (tests/e2e/upgrade.sh compares every
# earlier version's ALTER EXTENSION ... UPDATE with a fresh CREATE EXTENSION).
#
# Usage: sql_catalog.sh DBNAME
#
# What it covers: every member object (pg_depend deptype 'e'); each
# function's and procedure's pg_get_functiondef, ACL and comment; each view's
# pg_get_viewdef and options; each table's columns (position, type, default,
# not null, storage, ACL, comment), constraints, indexes, triggers, policies
# and row-level security; sequences; comments and ACLs of tables, sequences,
# views, functions and the schema; pg_init_privs; the config-dump
# registrations (extconfig, extcondition); and the rows of the extension's
# tables (a count, and the rows themselves when there are at most 100).
# No OIDs are printed: ACL items are sorted, multi-line definitions are
# split into numbered lines that each name their object.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DBNAME" >&2; exit 2; }
psql -qXAt -v ON_ERROR_STOP=1 -d "$1" <<'SQL'
WITH ext AS (
  SELECT oid, extname, extversion, extnamespace, extconfig, extcondition, extrelocatable
    FROM pg_extension WHERE extname = 'pg_mln'
), members AS (
  SELECT d.classid, d.objid, d.objsubid FROM pg_depend d, ext
   WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), rels AS (
  SELECT c.oid, c.oid::regclass::text AS name, c.relkind, c.relacl, c.reloptions, c.relpersistence,
         c.relrowsecurity, c.relforcerowsecurity, pg_get_userbyid(c.relowner) AS owner
    FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
), procs AS (
  SELECT p.oid, p.oid::regprocedure::text AS name, p.proacl, pg_get_userbyid(p.proowner) AS owner
    FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
), facts(section, obj, val) AS (
  SELECT 'extension', extname, format('version %s, relocatable %s, schema %s', extversion, extrelocatable,
                                      extnamespace::regnamespace) FROM ext
  UNION ALL
  SELECT 'member', pg_describe_object(classid, objid, objsubid), '' FROM members
  -- Functions and procedures.
  UNION ALL
  SELECT 'function', p.name, format('%s: %s', lpad(l.n::text, 4, '0'), l.line)
    FROM procs p, regexp_split_to_table(pg_get_functiondef(p.oid), E'\n') WITH ORDINALITY AS l(line, n)
  UNION ALL
  SELECT 'function', p.name, format('owner %s, acl %s', p.owner,
                                    (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(p.proacl) a)) FROM procs p
  UNION ALL
  SELECT 'function', p.name, 'comment: ' || coalesce(obj_description(p.oid, 'pg_proc'), '(none)') FROM procs p
  -- Relations: kind, options, owner, ACL, comment.
  UNION ALL
  SELECT 'relation', r.name,
         format('kind %s, persistence %s, options %s, owner %s, row security %s/%s, acl %s', r.relkind, r.relpersistence,
                (SELECT array_agg(o ORDER BY o) FROM unnest(r.reloptions) o), r.owner, r.relrowsecurity,
                r.relforcerowsecurity, (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(r.relacl) a))
    FROM rels r
  UNION ALL
  SELECT 'relation', r.name, 'comment: ' || coalesce(obj_description(r.oid, 'pg_class'), '(none)') FROM rels r
  UNION ALL
  SELECT 'view', r.name, format('%s: %s', lpad(l.n::text, 4, '0'), l.line)
    FROM rels r, regexp_split_to_table(pg_get_viewdef(r.oid), E'\n') WITH ORDINALITY AS l(line, n)
   WHERE r.relkind IN ('v', 'm')
  -- Columns, in their order (tables, views, sequences' owners below).
  UNION ALL
  SELECT 'column', format('%s.%s', r.name, lpad(a.attnum::text, 3, '0')),
         format('%s %s%s%s, storage %s, identity "%s", generated "%s", acl %s, comment: %s',
                quote_ident(a.attname), format_type(a.atttypid, a.atttypmod),
                CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                coalesce(' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid), ''), a.attstorage, a.attidentity,
                a.attgenerated, (SELECT array_agg(x::text ORDER BY x::text) FROM unnest(a.attacl) x),
                coalesce(col_description(r.oid, a.attnum), '(none)'))
    FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
   WHERE r.relkind IN ('r', 'p', 'v', 'm', 'f')
  -- Constraints, indexes, triggers and policies of the extension's tables.
  UNION ALL
  SELECT 'constraint', format('%s %s', r.name, quote_ident(c.conname)),
         format('%s%s; comment: %s', pg_get_constraintdef(c.oid), CASE WHEN c.convalidated THEN '' ELSE ' (not validated)' END,
                coalesce(obj_description(c.oid, 'pg_constraint'), '(none)'))
    FROM rels r JOIN pg_constraint c ON c.conrelid = r.oid
  UNION ALL
  SELECT 'index', format('%s %s', r.name, quote_ident(i.relname)),
         format('%s; comment: %s', pg_get_indexdef(i.oid), coalesce(obj_description(i.oid, 'pg_class'), '(none)'))
    FROM rels r JOIN pg_index x ON x.indrelid = r.oid JOIN pg_class i ON i.oid = x.indexrelid
  UNION ALL
  SELECT 'trigger', format('%s %s', r.name, quote_ident(t.tgname)),
         format('%s; enabled %s; comment: %s', pg_get_triggerdef(t.oid), t.tgenabled,
                coalesce(obj_description(t.oid, 'pg_trigger'), '(none)'))
    FROM rels r JOIN pg_trigger t ON t.tgrelid = r.oid AND NOT t.tgisinternal
  UNION ALL
  SELECT 'policy', format('%s %s', r.name, quote_ident(p.polname)),
         format('%s %s to %s using (%s) with check (%s); comment: %s',
                CASE WHEN p.polpermissive THEN 'permissive' ELSE 'restrictive' END, p.polcmd,
                (SELECT array_agg(CASE WHEN x = 0 THEN 'public' ELSE pg_get_userbyid(x)::text END ORDER BY 1)
                   FROM unnest(p.polroles) x),
                pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid),
                coalesce(obj_description(p.oid, 'pg_policy'), '(none)'))
    FROM rels r JOIN pg_policy p ON p.polrelid = r.oid
  UNION ALL
  SELECT 'rule', format('%s %s', r.name, quote_ident(w.rulename)), pg_get_ruledef(w.oid)
    FROM rels r JOIN pg_rewrite w ON w.ev_class = r.oid WHERE w.rulename <> '_RETURN'
  -- Sequences: parameters and the column that owns them.
  UNION ALL
  SELECT 'sequence', r.name,
         format('%s start %s increment %s min %s max %s cache %s cycle %s, owned by %s', format_type(s.seqtypid, NULL),
                s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle,
                (SELECT format('%s.%s', d.refobjid::regclass, a.attname) FROM pg_depend d
                   JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = r.oid AND d.deptype IN ('a', 'i')
                    AND d.refclassid = 'pg_class'::regclass))
    FROM rels r JOIN pg_sequence s ON s.seqrelid = r.oid
  -- The schema, comments on other members, initial privileges.
  UNION ALL
  SELECT 'schema', n.nspname,
         format('owner %s, acl %s, comment: %s', pg_get_userbyid(n.nspowner),
                (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(n.nspacl) a),
                coalesce(obj_description(n.oid, 'pg_namespace'), '(none)'))
    FROM pg_namespace n, ext WHERE n.oid = ext.extnamespace
       OR n.oid IN (SELECT objid FROM members WHERE classid = 'pg_namespace'::regclass)
  UNION ALL
  SELECT 'comment', pg_describe_object(m.classid, m.objid, m.objsubid), d.description
    FROM members m JOIN pg_description d ON d.classoid = m.classid AND d.objoid = m.objid AND d.objsubid = m.objsubid
   WHERE m.classid NOT IN ('pg_class'::regclass, 'pg_proc'::regclass, 'pg_namespace'::regclass)
  UNION ALL
  SELECT 'init privs', pg_describe_object(i.classoid, i.objoid, i.objsubid),
         format('%s %s', i.privtype, (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(i.initprivs) a))
    FROM pg_init_privs i
   WHERE (i.classoid, i.objoid) IN (SELECT classid, objid FROM members)
      OR i.classoid = 'pg_namespace'::regclass AND i.objoid = (SELECT extnamespace FROM ext)
  -- pg_dump's registrations, and the rows the extension's tables hold.
  UNION ALL
  SELECT 'config dump', c.cfg::regclass::text, coalesce(e.extcondition[c.n], '(no condition)')
    FROM ext e, unnest(e.extconfig) WITH ORDINALITY AS c(cfg, n)
  UNION ALL
  SELECT 'rows', r.name, x.line
    FROM rels r,
         LATERAL (SELECT (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %s', r.name),
                                                             true, false, '')))[1]::text::bigint AS n) c,
         LATERAL (SELECT 'count ' || c.n
                  UNION ALL
                  SELECT 'row ' || t FROM regexp_split_to_table(CASE WHEN c.n BETWEEN 1 AND 100 THEN
                    (xpath('/row/r/text()', query_to_xml(format(
                       'SELECT string_agg(t::text, E''\n'' ORDER BY t::text) AS r FROM %s t', r.name),
                       true, false, '')))[1]::text END, E'\n') AS t) AS x(line)
   WHERE r.relkind IN ('r', 'p')
)
-- One fact a line: a newline within a value (a policy's expression) is
-- written \n.
SELECT section || ' ' || obj || CASE WHEN coalesce(val, '') = '' THEN '' ELSE ' | ' || replace(val, E'\n', '\n') END
  FROM facts ORDER BY section COLLATE "C", obj COLLATE "C", val COLLATE "C";
SQL
