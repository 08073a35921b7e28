SELECT avg(price) FROM products GROUP BY category
