SELECT p.name FROM products p RIGHT JOIN categories c ON p.cat = c.id
