SELECT title, year FROM movies WHERE year >= 1990 AND year <= 1999 ORDER BY year
