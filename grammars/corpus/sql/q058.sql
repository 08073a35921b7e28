SELECT name FROM users ORDER name
