SELECT name FROM (SELECT name FROM users WHERE age < 18) AS minors
