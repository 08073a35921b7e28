SELECT name FROM users WHERE name LIKE '%son' ORDER BY name
