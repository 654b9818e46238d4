-- loop
WITH e(x, y) AS (VALUES (1, 2), (2, 2), (3, 1), (3, 3), (4, 5)) SELECT x FROM e WHERE x = y;
-- from3
WITH e(x, y) AS (VALUES (1, 2), (2, 2), (3, 1), (3, 3), (4, 5)) SELECT y FROM e WHERE x = 3;
-- has_in
WITH e(x, y) AS (VALUES (1, 2), (2, 2), (3, 1), (3, 3), (4, 5)) SELECT DISTINCT y FROM e;
-- two_hop
WITH e(x, y) AS (VALUES (1, 2), (2, 2), (3, 1), (3, 3), (4, 5)) SELECT DISTINCT a.x, b.y FROM e a JOIN e b ON a.y = b.x;
-- mark
WITH e(x, y) AS (VALUES (1, 2), (2, 2), (3, 1), (3, 3), (4, 5)) SELECT 9 UNION SELECT x FROM e WHERE x = y;
