-- nat
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10) SELECT n FROM nat;
-- square
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10) SELECT n, n * n FROM nat;
-- divmod
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10)
SELECT n, (n - 20) / 3, (n - 20) % 3 FROM nat WHERE n > 0;
-- between
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10) SELECT n FROM nat WHERE n >= 3 AND n <= 5;
-- not_four
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10) SELECT n FROM nat WHERE n * 2 <> n + 4 AND n <= 4;
-- negated
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10) SELECT n, -n - 1 FROM nat WHERE n <= 2;
-- chain
WITH RECURSIVE nat(n) AS (SELECT 0 UNION SELECT n + 1 FROM nat WHERE n < 10) SELECT n, (n + 1) * 2 FROM nat WHERE n <> 0 AND 100 / n > 30;
