SELECT u.name, o.total FROM users AS u JOIN orders AS o ON u.id = o.user_id
