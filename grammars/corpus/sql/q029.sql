SELECT p.name FROM products p INNER JOIN categories c ON p.cat = c.id
