-- dept_stats
SELECT c2, count(*), sum(c3), min(c3), max(c3) FROM (SELECT DISTINCT c1, c2, c3 FROM emp) e GROUP BY c2;
-- headcount
SELECT count(DISTINCT c1) FROM emp;
-- payroll
SELECT sum(c3) FROM (SELECT DISTINCT c1, c3 FROM emp) e;
-- distinct_salaries
SELECT sum(c3) FROM (SELECT DISTINCT c3 FROM emp) e;
-- big_dept
SELECT c2 FROM (SELECT DISTINCT c1, c2 FROM emp) e GROUP BY c2 HAVING count(*) >= 2;
