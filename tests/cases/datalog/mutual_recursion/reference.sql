-- even
WITH RECURSIVE parity(n, p) AS (
  SELECT 0, 0
  UNION SELECT s.c2, 1 - q.p FROM parity q JOIN succ s ON s.c1 = q.n)
SELECT n FROM parity WHERE p = 0;
-- odd
WITH RECURSIVE parity(n, p) AS (
  SELECT 0, 0
  UNION SELECT s.c2, 1 - q.p FROM parity q JOIN succ s ON s.c1 = q.n)
SELECT n FROM parity WHERE p = 1;
