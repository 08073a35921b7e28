SELECT name, FROM users
