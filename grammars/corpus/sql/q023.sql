SELECT name FROM users WHERE email IS NOT NULL AND name <> 'admin'
