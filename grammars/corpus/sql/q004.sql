SELECT count(*) FROM employees WHERE salary >= 50000
