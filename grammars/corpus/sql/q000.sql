SELECT name FROM users
