SELECT p.name FROM products p FULL OUTER JOIN categories c ON p.cat = c.id
