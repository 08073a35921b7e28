SELECT DISTINCT city FROM customers ORDER BY city
